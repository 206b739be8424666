import { describe, expect, it } from 'vitest';
import { parseError } from '../../helpers/parse-error';
import {
  parseGetfacl,
  parseSetfaclErrors,
  parseSetfaclTest,
  unescapeAclName,
} from '../../../handlers/fs/parse/getfacl';

const lineOf = (fn: () => unknown): number | undefined => parseError(fn).line;

const BLOCK = '# file: d\n# owner: root\n# group: root\nuser::rwx\ngroup::r-x\nother::r-x\n\n';

describe('parseGetfacl', () => {
  it('unescapes octal names, including UTF-8 escaped byte by byte', () => {
    expect(unescapeAclName('new\\012line')).toBe('new\nline');
    expect(unescapeAclName('back\\\\slash')).toBe('back\\slash');
    expect(unescapeAclName('\\303\\274ber')).toBe('über');
    expect(unescapeAclName('ünï raw')).toBe('ünï raw');
    parseError(() => unescapeAclName('bad\\9'));
  });

  it('reads named owner/group, numeric and odd qualifiers, effective comments after spaces', () => {
    const out =
      '# file: a\\040b\n# owner: j\\134doe\n# group: 100\n' +
      'user::rwx\nuser:svc.backup:rwx                  #effective:r-x\ngroup::r-x\nmask::r-x\nother::---\n\n';
    expect(parseGetfacl(out)).toEqual([
      {
        file: 'a b',
        owner: 'j\\doe',
        group: '100',
        flags: { setuid: false, setgid: false, sticky: false },
        entries: [
          { scope: 'access', tag: 'user', qualifier: null, perms: 'rwx' },
          { scope: 'access', tag: 'user', qualifier: 'svc.backup', perms: 'rwx', effective: 'r-x' },
          { scope: 'access', tag: 'group', qualifier: null, perms: 'r-x' },
          { scope: 'access', tag: 'mask', qualifier: null, perms: 'r-x' },
          { scope: 'access', tag: 'other', qualifier: null, perms: '---' },
        ],
      },
    ]);
  });

  it('refuses garbage, naming the line', () => {
    expect(lineOf(() => parseGetfacl(BLOCK + '# file: e\nuser::rwx\nsomething\n\n'))).toBe(10);
    expect(lineOf(() => parseGetfacl('# file: d\nuser::rwz\ngroup::r-x\nother::r-x\n\n'))).toBe(2);
    expect(lineOf(() => parseGetfacl('# file: d\nwheel::rwx\n\n'))).toBe(2);
    expect(lineOf(() => parseGetfacl('# file: d\nmask:x:rwx\n\n'))).toBe(2);
    expect(lineOf(() => parseGetfacl('# file: d\n# comment: x\n\n'))).toBe(2);
    expect(lineOf(() => parseGetfacl('# owner: root\nuser::rwx\n\n'))).toBe(1);
    expect(lineOf(() => parseGetfacl('# file: d\n# flags: xyz\n\n'))).toBe(2);
    expect(lineOf(() => parseGetfacl('# file: d\nuser::rwx\n# owner: root\n\n'))).toBe(3);
  });

  it('refuses truncated output: no final newline, or a block without its base entries', () => {
    expect(() => parseGetfacl(BLOCK.slice(0, -1))).not.toThrow(); // ends after other:: with one newline
    expect(() => parseGetfacl(BLOCK.slice(0, -2))).toThrow(/truncated/);
    expect(lineOf(() => parseGetfacl('# file: d\n# owner: root\n# group: root\nuser::rwx\n'))).toBe(1);
  });

  it('refuses the tabular (-t) form', () => {
    expect(lineOf(() => parseGetfacl('# file: share\nUSER   root      rwx  rwx\n\n'))).toBe(2);
  });

  it('empty output (getfacl failed) is no files', () => {
    expect(parseGetfacl('')).toEqual([]);
  });
});

describe('parseSetfaclTest', () => {
  it('splits at the last `: ` that is followed by a valid ACL pair', () => {
    const r = parseSetfaclTest('a: b: u::rw-,g::r--,o::r--,*\n');
    expect(r[0].path).toBe('a: b');
    expect(r[0].defaults).toBeNull();
  });

  it('joins a name broken by a raw newline back together', () => {
    const out = 'share: *,*\nshare/new\nline: u::rw-,g::r--,o::r--,*\nshare/x: u::rw-,g::r--,o::r--,*\n';
    expect(parseSetfaclTest(out, { root: 'share' }).map((r) => r.path)).toEqual([
      'share',
      'share/new\nline',
      'share/x',
    ]);
  });

  it('with a root, a record that does not start with it is garbage', () => {
    expect(lineOf(() => parseSetfaclTest('share: *,*\ngarbage\nshare/x: *,*\n', { root: 'share' }))).toBe(2);
    expect(lineOf(() => parseSetfaclTest('other: *,*\n', { root: 'share' }))).toBe(1);
    expect(lineOf(() => parseSetfaclTest('shared: *,*\n', { root: 'share' }))).toBe(1);
  });

  it('refuses an unfinished record and malformed ACL text', () => {
    expect(lineOf(() => parseSetfaclTest('share: *,*\ndangling\n'))).toBe(2);
    expect(lineOf(() => parseSetfaclTest('share: u::rwq,*\n'))).toBe(1);
    expect(lineOf(() => parseSetfaclTest('share: *,u::rwx\n'))).toBe(1); // default side must be d:
    expect(lineOf(() => parseSetfaclTest('share: *\n'))).toBe(1);
    expect(() => parseSetfaclTest('share: *,*')).toThrow(/truncated/);
  });

  it('reads the empty default side left by -k', () => {
    expect(parseSetfaclTest('share: *,\n')).toEqual([{ path: 'share', access: null, defaults: [] }]);
  });

  it('reads the empty default side after a changed access side (-b, or -k with -m)', () => {
    // acl 2.3.1, `setfacl --test -b -- share` on a directory with named and default entries
    // (fixtures/setfacl/test-b.yaml): "%s: %s,%s\n" with an empty default text
    expect(parseSetfaclTest('share: u::rwx,g::r-x,o::r-x,\n', { root: 'share' })).toEqual([
      {
        path: 'share',
        access: [
          { scope: 'access', tag: 'user', qualifier: null, perms: 'rwx' },
          { scope: 'access', tag: 'group', qualifier: null, perms: 'r-x' },
          { scope: 'access', tag: 'other', qualifier: null, perms: 'r-x' },
        ],
        defaults: [],
      },
    ]);
    // `setfacl --test -k -m u:daemon:r -- share`
    const r = parseSetfaclTest('share: u::rwx,u:daemon:r--,g::r-x,m::r-x,o::r-x,\n');
    expect(r[0].access?.map((e) => `${e.tag}:${e.qualifier ?? ''}:${e.perms}`)).toEqual([
      'user::rwx',
      'user:daemon:r--',
      'group::r-x',
      'mask::r-x',
      'other::r-x',
    ]);
    expect(r[0].defaults).toEqual([]);
    // an empty token anywhere but last is still not setfacl's
    expect(lineOf(() => parseSetfaclTest('share: u::rwx,,o::r-x,*\n'))).toBe(1);
  });
});

describe('parseSetfaclErrors', () => {
  it('classifies every setfacl message seen on Debian 12', () => {
    const stderr = [
      'setfacl: Option -m: Invalid argument near character 3',
      'setfacl: Option -x incomplete',
      'setfacl: a: b: No such file or directory',
      "setfacl: share: Malformed access ACL `user::rw-,other::r--': Missing or wrong entry at entry 1",
      'something new',
    ].join('\n');
    expect(parseSetfaclErrors(stderr)).toEqual([
      { kind: 'invalid-argument', option: '-m', character: 3 },
      { kind: 'incomplete', option: '-x' },
      { kind: 'file', path: 'a: b', message: 'No such file or directory' },
      {
        kind: 'file',
        path: 'share',
        message: "Malformed access ACL `user::rw-,other::r--': Missing or wrong entry at entry 1",
      },
      { kind: 'other', message: 'something new' },
    ]);
  });
});
