/**
 * The bounds of the S3 request schemas, `ss` listening ports and tc's units (#35 item 8): each
 * limit tried on both sides, each anchor with text before or after, each error naming its parser
 * and line.
 */
import { describe, expect, it } from 'vitest';
import { createBody, updateBody } from '../../handlers/s3/requests';
import { parseSsListening } from '../../handlers/s3/parse/ss';
import { credentialWarnings } from '../../handlers/s3/credentials';
import { normalizeHex32, parseTcRate, parseTcSize, tcShownRate } from '../../handlers/traffic/parse/tc-units';
import { ParseError } from '../../handlers/core/parse-error';

const body = {
  shareName: 'media',
  path: '/srv/data/media',
  port: '9000',
  rootUser: 'admin',
  rootPassword: 'secret-key-1',
};
const issues = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  r.success ? [] : r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

describe('S3 create body', () => {
  it('a port is 1024-65535 written without leading zeros, nothing before or after', () => {
    expect(createBody.safeParse(body).success).toBe(true);
    for (const p of ['1024', '9999', '10000', '65535'])
      expect([p, createBody.safeParse({ ...body, port: p }).success]).toEqual([p, true]);
    expect(issues(createBody.safeParse({ ...body, port: '1023' }))).toEqual(['port: port: 1024-65535']);
    expect(issues(createBody.safeParse({ ...body, port: '65536' }))).toEqual(['port: port: 1024-65535']);
    const shape = 'port: port: a number 1024-65535 written as a string, without leading zeros';
    for (const p of ['09000', 'x9000', '9000x', '900', '100000', ' 9000', '9a00', '', '0900'])
      expect([p, issues(createBody.safeParse({ ...body, port: p }))[0]]).toEqual([p, shape]);
    expect(createBody.shape.port.description).toBe(
      'TCP port, 1024-65535, as a string; not used by another share nor by a listening socket',
    );
  });
  it('credentials: 1-256 characters, no control character', () => {
    for (const k of ['rootUser', 'rootPassword'] as const) {
      expect(issues(createBody.safeParse({ ...body, [k]: '' }))).toEqual([`${k}: ${k} must not be empty`]);
      expect(createBody.safeParse({ ...body, [k]: 'x'.repeat(256) }).success).toBe(true);
      expect(createBody.safeParse({ ...body, [k]: 'x'.repeat(257) }).success).toBe(false);
      for (const c of ['a\nb', 'a\0b', 'a\u001fb', 'a\u007fb', '\tab'])
        expect(issues(createBody.safeParse({ ...body, [k]: c }))).toEqual([
          `${k}: ${k} must not contain control characters (line breaks, NUL, …)`,
        ]);
      expect(createBody.safeParse({ ...body, [k]: 'a b~é' }).success).toBe(true);
    }
  });
  it('weak credentials: a warning under 3 user or 8 password bytes (MinIO counts UTF-8 bytes), none at the minimum', () => {
    const short = 'rootUser is shorter than 3 characters (the S3 minimum): the service will not start';
    const weak = 'rootPassword is shorter than 8 characters (the S3 minimum): the service will not start';
    expect(credentialWarnings('ab', 'abcdefg')).toEqual([short, weak]);
    expect(credentialWarnings('abc', 'abcdefgh')).toEqual([]);
    // two characters in four bytes, four in eight: MinIO (Go's len) takes both
    expect(credentialWarnings('éé', 'éééé')).toEqual([]);
    expect(credentialWarnings('é', 'ééé')).toEqual([short, weak]);
    expect(credentialWarnings('a=b', 'abcdefgh')).toEqual([
      'rootUser contains "=" or ",", which S3 access keys may not: the service will not start',
    ]);
  });
  it('no other key', () => {
    expect(issues(createBody.safeParse({ ...body, extra: 1 }))).toEqual([': Unrecognized key: "extra"']);
  });
});

describe('S3 update body', () => {
  it('rootUser, rootPassword or both; neither is refused', () => {
    expect(updateBody.safeParse({ rootUser: 'abc' }).success).toBe(true);
    expect(updateBody.safeParse({ rootPassword: 'abcdefgh' }).success).toBe(true);
    expect(updateBody.safeParse({ rootUser: 'abc', rootPassword: 'abcdefgh' }).success).toBe(true);
    expect(issues(updateBody.safeParse({}))).toEqual([': give rootUser, rootPassword or both']);
    expect(issues(updateBody.safeParse({ rootUser: 'a\nb' }))).toEqual([
      'rootUser: rootUser must not contain control characters (line breaks, NUL, …)',
    ]);
    expect(updateBody.safeParse({ other: 'x', rootUser: 'a' }).success).toBe(false);
  });
});

describe('ss -Hltn', () => {
  const row = (local: string, q = '0 4096') => `LISTEN ${q} ${local} 0.0.0.0:*`;
  const fail = (text: string): [string, number | undefined, string] => {
    try {
      parseSsListening(text);
    } catch (e) {
      if (e instanceof ParseError) return [e.parser, e.line, e.message];
      throw e;
    }
    throw new Error('parsed');
  };
  it('ports sorted and unique, each address form, blank and indented lines', () => {
    expect(
      parseSsListening(
        [
          '',
          row('0.0.0.0:22'),
          `   ${row('[::]:22')}  `,
          row('127.0.0.53%lo:53'),
          row('*:80'),
          row('[::ffff:127.0.0.1]:8080'),
          '  ',
          row('0.0.0.0:0'),
          row('0.0.0.0:65535'),
        ].join('\n'),
      ),
    ).toEqual([0, 22, 53, 80, 8080, 65535]);
    expect(parseSsListening('')).toEqual([]);
  });
  it('each malformed line is a ParseError of ss naming its line', () => {
    const ok = row('0.0.0.0:22');
    expect(fail(`${ok}\nLISTEN 0 4096 0.0.0.0:22`)).toEqual([
      'ss',
      2,
      'ss: line 2: expected State Recv-Q Send-Q Local:Port Peer:Port',
    ]);
    expect(fail(`${ok}\n${ok}\n${row('0.0.0.0:22', 'x 4096')}`)).toEqual([
      'ss',
      3,
      'ss: line 3: Recv-Q and Send-Q must be numbers',
    ]);
    for (const q of ['0 x', '0 1x', '0 x1', 'x1 0', '1x 0'])
      expect([q, fail(row('0.0.0.0:22', q))[2]]).toEqual([q, 'ss: line 1: Recv-Q and Send-Q must be numbers']);
    expect(fail(`\n${row('0.0.0.0:http')}`)).toEqual(['ss', 2, 'ss: line 2: local address has no numeric port']);
    expect(fail(row('0.0.0.0:123456'))[2]).toBe('ss: line 1: local address has no numeric port');
    expect(fail(`${ok}\n${row('0.0.0.0:65536')}`)).toEqual(['ss', 2, 'ss: line 2: port out of range']);
    expect(fail(row('0.0.0.0:99999'))[2]).toBe('ss: line 1: port out of range');
  });
});

describe('tc units', () => {
  it('rates: SI and IEC prefixes, decimals, nothing before or after', () => {
    expect(
      ['8Mbit', '500Kbit', '12345Kbit', '8Mibit', '1.5Gbit', '2Tbit', '999bit', '1Kibit', '0.25Mbit'].map(parseTcRate),
    ).toEqual([8e6, 5e5, 12345000, 8 * 1024 ** 2, 1.5e9, 2e12, 999, 1024, 250000]);
    for (const t of ['x8Mbit', '8Mbitx', '8Mbits', 'Mbit', '8.Mbit', '.5Mbit', '8Pbit', '8mbit', '8MBit', '1.a5Mbit'])
      expect([t, parseTcRate(t)]).toEqual([t, null]);
  });
  it('the rate tc shows for a configured one (iproute2 print_rate)', () => {
    expect(
      [999, 1000, 1500, 12345678, 8_000_000, 999_999, 1_000_001, 1e15, 1_234_000, 5_000_000_000_001].map(tcShownRate),
    ).toEqual([999, 1000, 1500, 12345000, 8_000_000, 999_999, 1_000_000, 1e15, 1_234_000, 5_000_000_000_000]);
  });
  it('sizes: b, Kb, Mb, Gb in 1024s, decimals, nothing before or after', () => {
    expect(['1600b', '15Kb', '1Mb', '2Gb', '1.5Kb', '0.5Mb'].map(parseTcSize)).toEqual([
      1600, 15360, 1048576, 2147483648, 1536, 524288,
    ]);
    for (const t of ['x1Mb', '1Mbx', '1Mbit', 'Mb', '1.Mb', '1Tb', '1kb', '1.x5Mb'])
      expect([t, parseTcSize(t)]).toEqual([t, null]);
    expect(parseTcSize('1.25Kb')).toBe(1280);
  });
  it('u32 hex: with or without 0x, padded to 8 lower-case digits', () => {
    expect(['0x1A', 'ffffffff', '0', '0X1'].map(normalizeHex32)).toEqual(['0000001a', 'ffffffff', '00000000', null]);
    expect(normalizeHex32('123456789')).toBeNull();
    expect(normalizeHex32('x1')).toBeNull();
  });
});
