import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFixtureDir, type Fixture } from '../../../runtime/system/fixture-file';
import { ParseError } from '../../../handlers/core/parse-error';
import {
  keytabList,
  klist,
  klistTimeToIso,
  parseKeytabList,
  parseKlist,
  parseKlistCollection,
} from '../../../handlers/kerberos/parse/klist';
import { entryFor, runFixtureTable } from '../../helpers/fixture-runner';
import { KERBEROS_FIXTURES } from '../fixture-tables';
import { parseError } from '../../helpers/parse-error';

const repo = resolve(__dirname, '../../..');
const fixtures: Fixture[] = [
  ...loadFixtureDir(join(repo, 'fixtures/klist')),
  ...loadFixtureDir(join(repo, 'fixtures/kinit')),
];
const byName = (name: string) => {
  const f = fixtures.find((x) => x.file?.endsWith(`/${name}.yaml`));
  if (!f) throw new Error(`no fixture ${name}`);
  return f;
};

describe('kerberos command fixtures', () => {
  it('are all there (upstream captures and local recordings)', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    expect(fixtures.filter((f) => f.source.startsWith('upstream sample')).length).toBe(9);
    for (const f of fixtures) expect(f.argv[0], f.file).toMatch(/^\/usr\/bin\/(klist|kinit)$/);
  });

  it('the base replay set (fixtures without a scenario) has one fixture per argv', () => {
    // Replay keeps the last loaded fixture per argv; duplicates carry a `scenario` instead.
    const seen = new Map<string, string>();
    for (const f of fixtures) {
      if (f.scenario !== undefined || f.once) continue;
      const key = JSON.stringify(f.argv);
      expect(seen.get(key), `${f.file} repeats the argv of ${seen.get(key)}`).toBeUndefined();
      seen.set(key, f.file ?? '');
    }
  });
});

// every fixture against its expected JSON, with the declared shape: the table in ../fixture-tables.ts
runFixtureTable(KERBEROS_FIXTURES);

describe('parseKlist', () => {
  const full = byName('local-for-client-f-e').stdout;

  it('reads every detail-line layout klist produces', () => {
    // -e without -f: Etype on the renew line; -f -e without renew: Flags and Etype on one line.
    expect(parseKlist(byName('local-tgt-service-e').stdout).tickets[0]).toEqual({
      service: 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
      start: '2026-11-25T22:13:20Z',
      expires: '2026-11-26T08:13:20Z',
      renewUntil: '2026-12-02T22:13:20Z',
      etypes: { sessionKey: 'aes256-cts-hmac-sha1-96', ticket: 'aes256-cts-hmac-sha1-96' },
    });
    expect(parseKlist(byName('local-norenew-f-e').stdout).tickets[0].flags).toBe('FI');
    expect(parseKlist(full).tickets[1].client).toBe('alice@EXAMPLE.TEST');
  });

  it('accepts a cache with no tickets', () => {
    const text =
      'Ticket cache: KCM:0\nDefault principal: alice@EXAMPLE.TEST\n\nValid starting     Expires            Service principal\n';
    expect(parseKlist(text)).toEqual({ cache: 'KCM:0', defaultPrincipal: 'alice@EXAMPLE.TEST', tickets: [] });
  });

  it('accepts the 4-digit-year form (en_US %x) and wider columns', () => {
    const text = [
      'Ticket cache: FILE:/tmp/krb5cc_0',
      'Default principal: alice@EXAMPLE.TEST',
      '',
      'Valid starting       Expires              Service principal',
      '11/25/2026 21:20:23  11/26/2026 07:20:23  krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
      '\trenew until 12/02/2026 21:20:23',
      '',
    ].join('\n');
    expect(parseKlist(text).tickets[0]).toEqual({
      service: 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
      start: '2026-11-25T21:20:23Z',
      expires: '2026-11-26T07:20:23Z',
      renewUntil: '2026-12-02T21:20:23Z',
    });
  });

  it('maps two-digit years like POSIX strptime %y and rejects impossible dates', () => {
    expect(klistTimeToIso('01/01/69 00:00:00')).toBe('1969-01-01T00:00:00Z');
    expect(klistTimeToIso('12/31/68 23:59:59')).toBe('2068-12-31T23:59:59Z');
    expect(klistTimeToIso('02/29/28 12:00:00')).toBe('2028-02-29T12:00:00Z');
    expect(parseError(() => klistTimeToIso('02/30/26 12:00:00', 'klist', 7)).line).toBe(7);
    parseError(() => klistTimeToIso('13/01/26 12:00:00'));
    parseError(() => klistTimeToIso('11/25/26 24:00:00'));
    // A localised date (not LC_ALL=C) is refused, not guessed.
    parseError(() => klistTimeToIso('25.11.2026 21:20:23'));
  });

  it('answers a time it has seen from memory, the same text; a bad one is refused every time, with its line', () => {
    for (let i = 0; i < 3; i++) expect(klistTimeToIso('11/25/26 21:20:23')).toBe('2026-11-25T21:20:23Z');
    // past the cache's bound (it empties) the answers stay the same
    for (let s = 0; s < 600; s++)
      klistTimeToIso(
        `01/01/30 00:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`,
      );
    expect(klistTimeToIso('11/25/26 21:20:23')).toBe('2026-11-25T21:20:23Z');
    expect(klistTimeToIso('01/01/30 00:09:59')).toBe('2030-01-01T00:09:59Z');
    for (const line of [3, 9])
      expect(parseError(() => klistTimeToIso('02/30/26 12:00:00', 'klist', line)).line).toBe(line);
  });

  it('rejects input that is not klist output, naming the line', () => {
    expect(parseError(() => parseKlist('')).line).toBe(1);
    expect(parseError(() => parseKlist('total 0\ndrwxr-xr-x 2 root root 40 .\n')).line).toBe(1);
    const lines = full.split('\n');
    expect(
      parseError(() => parseKlist([...lines.slice(0, 5), 'garbage here', ...lines.slice(5)].join('\n'))).line,
    ).toBe(6);
    expect(parseError(() => parseKlist(full.replace('Flags: FRT', 'Flagz: FRT'))).line).toBe(9);
    expect(
      parseError(() => parseKlist(full.replace('\trenew until 12/02/26 22:13:21, Flags: FRI', '\tAddresses: (none)')))
        .line,
    ).toBe(6);
    // A detail line before any ticket.
    expect(
      parseError(() => parseKlist(lines.slice(0, 4).join('\n') + '\n\trenew until 12/02/26 22:13:21\n')).line,
    ).toBe(5);
    // klist -A (several caches) is not this parser's format: it stops at the blank separator.
    const all = `${full}\n${full}`;
    expect(parseError(() => parseKlist(all)).line).toBe(lines.length);
  });

  it('rejects output cut at any point with a ParseError, or yields a well-formed prefix', () => {
    for (const f of fixtures.filter((x) => entryFor(KERBEROS_FIXTURES, x).name === 'klist')) {
      const text = f.stdout;
      for (let cut = 0; cut < text.length; cut++) {
        let result: unknown;
        try {
          result = parseKlist(text.slice(0, cut));
        } catch (e) {
          expect(e, `${f.file} cut at ${cut}`).toBeInstanceOf(ParseError);
          expect((e as ParseError).line, `${f.file} cut at ${cut}`).toBeGreaterThan(0);
          continue;
        }
        // Cut right after a complete line: a valid (shorter) listing.
        expect(() => klist.parse(result)).not.toThrow();
      }
    }
  });
});

describe('parseKeytabList', () => {
  const kte = byName('local-multi-keytab-k-t-e').stdout;

  it('reads all combinations of -t and -e', () => {
    const all = parseKeytabList(kte).keys;
    const kOnly = parseKeytabList(byName('local-multi-keytab-k').stdout).keys;
    const kt = parseKeytabList(byName('local-multi-keytab-k-t').stdout).keys;
    const ke = parseKeytabList(byName('local-multi-keytab-k-e').stdout).keys;
    expect(kOnly).toEqual(all.map(({ kvno, principal }) => ({ kvno, principal })));
    expect(kt).toEqual(all.map(({ kvno, timestamp, principal }) => ({ kvno, timestamp, principal })));
    expect(ke).toEqual(all.map(({ kvno, principal, enctype }) => ({ kvno, principal, enctype })));
    expect(new Set(all.map((k) => k.kvno))).toEqual(new Set([2, 3, 4]));
    expect(all.map((k) => k.enctype)).toContain('DEPRECATED:arcfour-hmac');
  });

  it('treats the missing-keytab stdout (name line only) as truncated', () => {
    for (const name of ['local-keytab-missing', 'upstream-klist-k-missing', 'local-keytab-empty-file']) {
      const e = parseError(() => parseKeytabList(byName(name).stdout));
      expect(e.line).toBe(2);
    }
  });

  it('accepts an existing keytab with no entries', () => {
    const text =
      'Keytab name: FILE:/etc/krb5.keytab\nKVNO Principal\n---- --------------------------------------------------------------------------\n';
    expect(parseKeytabList(text)).toEqual({ keytab: 'FILE:/etc/krb5.keytab', keys: [] });
  });

  it('reads kvnos wider than the 4-character column and unnamed enctypes', () => {
    const text = [
      'Keytab name: FILE:/etc/krb5.keytab',
      'KVNO Principal',
      '---- --------------------------------------------------------------------------',
      '65536 host/a.example.test@EXAMPLE.TEST (etype 99) ',
      '',
    ].join('\n');
    expect(parseKeytabList(text).keys).toEqual([
      { kvno: 65536, principal: 'host/a.example.test@EXAMPLE.TEST', enctype: 'etype 99' },
    ]);
  });

  it('refuses klist -K output and never echoes the key in the error', () => {
    const key = '0x7a3f9c1e55d2b8a04e6f1c2d3b4a59687a3f9c1e55d2b8a04e6f1c2d3b4a5968';
    const lines = kte.split('\n');
    lines[3] = `${lines[3]} (${key})`;
    const e = parseError(() => parseKeytabList(lines.join('\n')));
    expect(e.line).toBe(4);
    expect(e.message).not.toContain(key.slice(2, 12));
  });

  it('rejects garbage, naming the line', () => {
    expect(parseError(() => parseKeytabList('')).line).toBe(1);
    expect(parseError(() => parseKeytabList(kte.replace('KVNO Timestamp', 'KVNO Stamp'))).line).toBe(2);
    expect(parseError(() => parseKeytabList(kte.replace('---- ---', '==== ---'))).line).toBe(3);
    expect(parseError(() => parseKeytabList(kte + 'not a key line\n')).line).toBe(13);
    expect(parseError(() => parseKeytabList(kte.replace('   4 11/25/26', '   x 11/25/26'))).line).toBe(9);
    for (let cut = 0; cut < kte.length; cut++) {
      try {
        keytabList.parse(parseKeytabList(kte.slice(0, cut)));
      } catch (e) {
        expect(e, `cut at ${cut}`).toBeInstanceOf(ParseError);
        expect((e as ParseError).line).toBeGreaterThan(0);
      }
    }
  });
});

describe('parseKlistCollection', () => {
  it('flags principals cut at 30 characters and expired caches', () => {
    const text = [
      'Principal name                 Cache name',
      '--------------                 ----------',
      'alice@EXAMPLE.TEST             KEYRING:persistent:0:0 (Expired)',
      '',
    ].join('\n');
    expect(parseKlistCollection(text).caches).toEqual([
      { principal: 'alice@EXAMPLE.TEST', principalTruncated: false, cache: 'KEYRING:persistent:0:0', expired: true },
    ]);
    expect(parseKlistCollection(byName('local-collection-l').stdout).caches[0].principalTruncated).toBe(true);
  });

  it('rejects garbage, naming the line', () => {
    expect(parseError(() => parseKlistCollection('')).line).toBe(1);
    expect(parseError(() => parseKlistCollection(byName('upstream-klist-l').stdout + 'short\n')).line).toBe(4);
  });
});
