import { describe, expect, it } from 'vitest';
import { keytabPath, principal, realmFileName, realmName, username } from '../../../handlers/kerberos/names';

const ok = (s: { safeParse(v: unknown): { success: boolean } }, v: string) => s.safeParse(v).success;

// Names that must never reach a file name or an argv element.
const HOSTILE = [
  '../x',
  '-x',
  '.x',
  'a/b',
  'a\0b',
  '',
  '..',
  '.',
  'a b',
  'a\nb',
  '/etc/passwd',
  '--help',
  'a\\b',
  'x.conf',
];

describe('realmFileName', () => {
  it('rejects traversal, options, dotfiles, separators, NUL and blanks', () => {
    // dots are allowed inside (issue 12 item 2): the realm itself and listing keys are names
    for (const v of HOSTILE.filter((v) => v !== 'x.conf')) expect(ok(realmFileName, v), JSON.stringify(v)).toBe(false);
    for (const v of ['a..b', '.conf', 'a/b.conf']) expect(ok(realmFileName, v), v).toBe(false);
    expect(ok(realmFileName, 'a'.repeat(70))).toBe(false);
    expect(ok(realmFileName, 'lab_')).toBe(true);
  });
  it('accepts names MIT includedir reads as <name>.conf', () => {
    for (const v of [
      'lab',
      'LAB-EXAMPLE',
      'corp_example_com',
      '0',
      'a'.repeat(64),
      'CORP.EXAMPLE.COM',
      'lab.conf',
      'x.conf',
    ])
      expect(ok(realmFileName, v), v).toBe(true);
  });
});

describe('realmName', () => {
  it('rejects hostile values and krb5.conf syntax characters', () => {
    for (const v of [...HOSTILE.filter((v) => v !== 'x.conf'), 'A=B', 'A*', '[A]', 'A{', 'A..B', 'A.', '.A']) {
      expect(ok(realmName, v), JSON.stringify(v)).toBe(false);
    }
  });
  it('accepts realms in any case', () => {
    for (const v of ['EXAMPLE.TEST', 'CORP.EXAMPLE.COM', 'stanford.edu', '1TS.ORG', 'MEDIA-LAB.MIT.EDU'])
      expect(ok(realmName, v), v).toBe(true);
  });
});

describe('principal and username', () => {
  it('reject hostile values', () => {
    for (const v of [
      '-x',
      '.x',
      'a\0b',
      '',
      'a b',
      'a\nb',
      '--help',
      'alice@',
      '@EXAMPLE.TEST',
      'a//b',
      'a/../b',
      'alice@EXAMPLE.TEST@X',
      "a'b",
      'a"b',
    ]) {
      expect(ok(principal, v), JSON.stringify(v)).toBe(false);
    }
    for (const v of ['../x', '-x', '.x', 'a/b', 'a\0b', 'alice@EXAMPLE.TEST', ''])
      expect(ok(username, v), JSON.stringify(v)).toBe(false);
  });
  it('accept ordinary principals', () => {
    for (const v of [
      'alice',
      'alice@EXAMPLE.TEST',
      'host/nas01.example.test@EXAMPLE.TEST',
      'NAS01$@CORP.EXAMPLE.COM',
      'admin/admin',
      'cifs/nas01.example.test',
    ]) {
      expect(ok(principal, v), v).toBe(true);
    }
    for (const v of ['alice', 'Administrator', 'j.doe', 'NAS01$']) expect(ok(username, v), v).toBe(true);
  });
});

describe('keytabPath', () => {
  it('accepts absolute normalised paths only', () => {
    expect(ok(keytabPath, '/etc/krb5.keytab')).toBe(true);
    expect(ok(keytabPath, '/var/lib/ballast/nfs.keytab')).toBe(true);
    for (const v of [
      'etc/krb5.keytab',
      '/etc/../root/x',
      '/etc/./x',
      '//x',
      '/x/',
      'FILE:/etc/krb5.keytab',
      '-k',
      '/a b',
      '/a\0b',
      '/a\nb',
      '',
    ]) {
      expect(ok(keytabPath, v), JSON.stringify(v)).toBe(false);
    }
  });
});
