/**
 * authorized_keys and key lines: every key type ssh-keygen 9.2 makes (fixtures/ssh-keygen, made
 * by test/tools/keys/make-key-fixtures.sh), security keys and certificates, with fingerprints
 * checked against what `ssh-keygen -l -E md5` printed for the same files; options with quoted
 * commas and spaces; unusable lines listed with a reason; rewrites that keep other bytes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appendLine,
  normalizeFingerprint,
  parseAuthorizedKeys,
  parseKeyLine,
  parseOptions,
  parsePublicKeyFile,
  removeByFingerprint,
  KeyLineError,
} from '../../../handlers/keys/parse/authorized-keys';
import { repo } from '../../helpers/host';
import { parseError } from '../../helpers/parse-error';

const KEYS = join(repo, 'fixtures/ssh-keygen');
const AK = join(repo, 'fixtures/authorized_keys');
const read = (f: string) => readFileSync(f, 'utf8');

/** `256 MD5:aa:… comment (TYPE)` → fingerprint, bits, type */
function keygenLine(l: string) {
  const m = /^(\d+) MD5:(\S+) ([^]*) \(([A-Z0-9-]+)\)$/.exec(l);
  if (!m) throw new Error(`not an ssh-keygen -l line: ${l}`);
  return { bits: Number(m[1]), fingerprint: m[2], comment: m[3], type: m[4] };
}

function lineError(line: string): string {
  try {
    parseKeyLine(line);
  } catch (e) {
    if (e instanceof KeyLineError) return e.message;
    throw e;
  }
  throw new Error(`accepted: ${line}`);
}

describe('key lines of every type', () => {
  const pubs = readdirSync(KEYS).filter((f) => f.endsWith('.pub'));

  it('has the fixtures: plain, security-key and certificate types', () => {
    expect(pubs.sort()).toEqual(
      [
        'dsa',
        'ecdsa256',
        'ecdsa256-cert',
        'ecdsa384',
        'ecdsa521',
        'ed25519',
        'ed25519-cert',
        'rsa1024',
        'rsa3072',
        'rsa3072-cert',
        'sk-ecdsa',
        'sk-ecdsa-cert',
        'sk-ed25519',
        'sk-ed25519-cert',
      ]
        .map((n) => `${n}.pub`)
        .sort(),
    );
  });

  for (const f of pubs) {
    it(`${f}: fingerprint and size as ssh-keygen -l -E md5 prints them`, () => {
      const want = keygenLine(read(join(KEYS, f.replace(/\.pub$/, '.md5'))).trim());
      const k = parsePublicKeyFile(read(join(KEYS, f)));
      expect(k.fingerprint).toBe(want.fingerprint.toLowerCase());
      expect(k.bits).toBe(want.bits);
      expect(k.certificate).toBe(want.type.endsWith('-CERT'));
      expect(k.options).toBe('');
      expect(k.algo).toBe(read(join(KEYS, f)).split(' ')[0]);
      // ssh-keygen prints a certificate's comment from the cert file; ours is the line's
      if (!k.certificate) expect(k.comment).toBe(want.comment);
    });
  }

  it('takes the upstream samples (ed25519 fingerprint as captured on Debian 12)', () => {
    const k = parsePublicKeyFile(
      read('/work/shared/upstream-samples/ssh-keygen/debian12-openssh-9.2p1-id_ed25519.pub.txt'),
    );
    expect([k.algo, k.comment, k.fingerprint]).toEqual([
      'ssh-ed25519',
      'admin@nas01',
      '20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55',
    ]);
    const e = parsePublicKeyFile(
      read('/work/shared/upstream-samples/ssh-keygen/debian12-openssh-9.2p1-id_ecdsa.pub.txt'),
    );
    expect([e.algo, e.comment, e.bits]).toEqual(['ecdsa-sha2-nistp256', '', 256]);
  });
});

describe('authorized_keys files', () => {
  for (const name of ['mixed', 'upstream-test-input']) {
    it(`${name}.txt parses to the reviewed ${name}.expected.json`, () => {
      const got = parseAuthorizedKeys(read(join(AK, `${name}.txt`)));
      expect(got).toEqual(JSON.parse(read(join(AK, `${name}.expected.json`))));
    });

    it(`${name}.txt: every usable entry has the fingerprint ssh-keygen -l -E md5 printed for it`, () => {
      const usable = parseAuthorizedKeys(read(join(AK, `${name}.txt`))).filter((e) => !e.error);
      // ssh-keygen -l does not check options; sshd refuses these three lines (bad options)
      const optionErrors = new Set(['unknown option', 'flag with value', 'unquoted value']);
      const keygen = read(join(AK, `${name}.ssh-keygen-l-E-md5.out`))
        .trim()
        .split('\n')
        .map(keygenLine)
        .filter((l) => !optionErrors.has(l.comment));
      expect(usable.map((e) => e.fingerprint)).toEqual(keygen.map((l) => l.fingerprint));
    });
  }

  it('lists unusable lines with their reason, in place, and skips blanks and comments', () => {
    const got = parseAuthorizedKeys('# c\n\nssh-ed25519 AAAAnotbase64!! broken\n   \n');
    expect(got).toEqual([
      {
        index: 0,
        algo: '',
        blob: '',
        comment: '',
        fingerprint: '',
        line: 'ssh-ed25519 AAAAnotbase64!! broken',
        error: 'the key is not valid base64',
      },
    ]);
    expect(parseAuthorizedKeys('')).toEqual([]);
  });

  it('refuses a file with NUL bytes (not text)', () => {
    expect(parseError(() => parseAuthorizedKeys('ssh-ed25519 AAAA\0')).message).toBe(
      'authorized_keys: the file contains NUL bytes: not a text file',
    );
  });
});

describe('options', () => {
  it('splits at commas outside quotes and unescapes \\"', () => {
    expect(
      parseOptions(
        'from="10.0.0.0/8,192.168.1.*",command="/usr/local/bin/backup --mode \\"full, incr\\"",NO-PTY,restrict',
      ),
    ).toEqual([
      { name: 'from', value: '10.0.0.0/8,192.168.1.*' },
      { name: 'command', value: '/usr/local/bin/backup --mode "full, incr"' },
      { name: 'no-pty' },
      { name: 'restrict' },
    ]);
  });

  it('keeps a quoted space inside the options field', () => {
    const ed = read(join(KEYS, 'ed25519.pub')).trim().split(' ').slice(0, 2).join(' ');
    const k = parseKeyLine(`command="echo a b",environment="X=1 2" ${ed} c d`);
    expect([k.options, k.algo, k.comment]).toEqual(['command="echo a b",environment="X=1 2"', 'ssh-ed25519', 'c d']);
  });

  it('refuses malformed and unknown options', () => {
    expect(() => parseOptions('no-pty,')).toThrow('the options end with a comma');
    expect(() => parseOptions('expiry-time="tomorrow"')).toThrow('option expiry-time has an invalid value');
    expect(() => parseOptions('tunnel="x"')).toThrow('option tunnel has an invalid value');
    expect(() => parseOptions('environment="no equals"')).toThrow('option environment has an invalid value');
    expect(() => parseOptions('command')).toThrow('option command needs a value (command="…")');
    expect(() => parseOptions('restrict"x"')).toThrow('option restrict: expected a comma after it');
    expect(() => parseOptions(',restrict')).toThrow('option 1 has no name');
  });
});

describe('broken key blobs', () => {
  const ed = read(join(KEYS, 'ed25519.pub')).split(' ')[1];
  const b64 = (bytes: number[]) => Buffer.from(bytes).toString('base64');
  const str = (s: string | number[]) => {
    const b = typeof s === 'string' ? [...Buffer.from(s)] : s;
    return [0, 0, (b.length >> 8) & 255, b.length & 255, ...b];
  };

  it('names what is wrong', () => {
    expect(lineError(`ssh-ed25519 ${ed}AAAA`)).toBe('the key blob has trailing bytes');
    expect(lineError(`ssh-ed25519 ${ed.slice(0, -4)}`)).toBe('the key blob ends inside the Ed25519 key');
    expect(lineError(`ssh-ed25519 ${ed.slice(0, -1)}`)).toBe('the key is not valid base64');
    expect(lineError(`ssh-ed25519 ${ed.slice(0, 20)} ${ed.slice(20)}`)).toBe(
      'the key blob ends inside the Ed25519 key',
    );
    expect(lineError(`ssh-ed25519 ${b64([...str('ssh-ed25519'), ...str(new Array(31).fill(1))])}`)).toBe(
      'the Ed25519 key is not 32 bytes',
    );
    const p256 = [4, ...new Array(64).fill(7)];
    expect(
      lineError(`ecdsa-sha2-nistp384 ${b64([...str('ecdsa-sha2-nistp384'), ...str('nistp256'), ...str(p256)])}`),
    ).toBe("the blob's curve nistp256 does not match ecdsa-sha2-nistp384");
    expect(
      lineError(
        `ecdsa-sha2-nistp256 ${b64([...str('ecdsa-sha2-nistp256'), ...str('nistp256'), ...str([2, ...new Array(32).fill(7)])])}`,
      ),
    ).toBe('the curve point is not an uncompressed nistp256 point');
    expect(lineError(`ssh-rsa ${b64([...str('ssh-rsa'), ...str([1, 0, 1]), ...str([0x80, 1])])}`)).toBe(
      'integer 2 is negative',
    );
    expect(lineError(`ssh-rsa ${b64([...str('ssh-rsa'), ...str([0, 1]), ...str([1])])}`)).toBe(
      'integer 1 has a superfluous leading zero',
    );
    expect(
      lineError(
        `sk-ssh-ed25519@openssh.com ${b64([...str('sk-ssh-ed25519@openssh.com'), ...str(new Array(32).fill(1)), ...str('')])}`,
      ),
    ).toBe('the security key application is empty');
    expect(lineError(`ssh-ed25519 ${b64([...str('ssh-ed\n5519')])}`)).toBe('the key type name is not printable ASCII');
    expect(lineError('ssh-ed25519')).toBe('no key after the key type');
    expect(lineError('restrict')).toBe('no key type');
    expect(lineError(`restrict ssh-ed25519x ${ed}`)).toBe('unknown key type ssh-ed25519x');
  });

  it('refuses a certificate cut short or with a bad type', () => {
    const cert = read(join(KEYS, 'ed25519-cert.pub')).split(' ');
    const bytes = Buffer.from(cert[1], 'base64');
    expect(lineError(`${cert[0]} ${bytes.subarray(0, bytes.length - 10).toString('base64')}`)).toBe(
      'the key blob ends inside the signature',
    );
    // the certificate type sits right after nonce (4+32), key (4+32) and serial (8)
    const typeAt = 4 + 32 + 4 + 32 + 4 + 32 + 8;
    const bad = Buffer.from(bytes);
    bad.writeUInt32BE(3, typeAt);
    expect(lineError(`${cert[0]} ${bad.toString('base64')}`)).toBe(
      'certificate type 3 is neither user (1) nor host (2)',
    );
  });

  it('a public key file must be exactly one key line', () => {
    expect(parseError(() => parsePublicKeyFile('')).message).toBe('public key file: expected one key line, found 0');
    expect(parseError(() => parsePublicKeyFile(`ssh-ed25519 ${ed} a\nssh-ed25519 ${ed} b\n`)).message).toBe(
      'public key file: expected one key line, found 2',
    );
    expect(parseError(() => parsePublicKeyFile(`restrict ssh-ed25519 ${ed}\n`)).message).toBe(
      'public key file: line 1: a public key file has no options',
    );
    expect(parseError(() => parsePublicKeyFile('-----BEGIN OPENSSH PRIVATE KEY-----\n')).message).toBe(
      'public key file: line 1: unknown option -----begin',
    );
  });
});

describe('rewrites', () => {
  const lines = parseAuthorizedKeys(read(join(AK, 'mixed.txt')));

  it('appends with a newline, adding a missing final newline first', () => {
    expect(appendLine(null, 'k')).toBe('k\n');
    expect(appendLine('', 'k')).toBe('k\n');
    expect(appendLine('# a\n', 'k')).toBe('# a\nk\n');
    expect(appendLine('# a', 'k')).toBe('# a\nk\n');
  });

  it('removes every line of a fingerprint and keeps every other byte', () => {
    const text = read(join(AK, 'mixed.txt'));
    const fp = '37:7d:2a:66:2c:48:81:d4:dd:5f:bc:39:80:64:38:92'; // the ecdsa256 key and its certificate
    const r = removeByFingerprint(text, fp);
    expect(r.removed.map((k) => k.algo)).toEqual(['ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp256-cert-v01@openssh.com']);
    const keptLines = text.split('\n').filter((l) => !r.removed.some((k) => k.line === l));
    expect(r.text).toBe(keptLines.join('\n'));
    expect(r.text).toContain(
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC75VH6N17xtpLAeTEBHD+i/VdLqgv1wSRMtbhW4KKgc crlf line\r\n',
    );
    expect(lines.filter((e) => e.fingerprint === fp)).toHaveLength(2);
  });

  it('removing the last line of a file without a final newline keeps the previous line intact', () => {
    const ed = read(join(KEYS, 'ed25519.pub')).trim();
    const rsa = read(join(KEYS, 'rsa3072.pub')).trim();
    expect(removeByFingerprint(`${rsa}\n${ed}`, 'a1:65:f1:6e:ef:a5:97:40:47:ff:d3:84:74:51:b8:c3').text).toBe(
      `${rsa}\n`,
    );
  });

  it('normalizes fingerprints given with MD5: or in upper case, and refuses anything else', () => {
    expect(normalizeFingerprint('MD5:20:FD:2D:69:A8:FB:18:22:8E:98:AC:B8:D2:37:74:55')).toBe(
      '20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55',
    );
    expect(normalizeFingerprint('md5:20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55')).toBe(
      '20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55',
    );
    expect(normalizeFingerprint('SHA256:wtGviu9rgnMNYTWE4Gh83vYHec6PYqZQWdC2hqnOllo')).toBeNull();
    expect(normalizeFingerprint('20:fd:2d')).toBeNull();
  });
});
