import { describe, expect, it } from 'vitest';
import {
  aclArgument,
  aclEntryList,
  aclEntryString,
  aclRemoveEntryString,
  checkAclEntry,
} from '../../../handlers/fs/acl';

describe('checkAclEntry (setfacl -m)', () => {
  it.each([
    ['u:nobody:rwx', 'user:nobody:rwx'],
    ['user:nobody:r-x', 'user:nobody:r-x'],
    ['u::rw', 'user::rw'],
    ['g:users:r', 'group:users:r'],
    ['group:100:7', 'group:100:7'],
    ['m::rx', 'mask::rx'],
    ['m:rwx', 'mask::rwx'],
    ['mask:r', 'mask::r'],
    ['o::r', 'other::r'],
    ['other:-', 'other::-'],
    ['d:u:nobody:rwX', 'default:user:nobody:rwX'],
    ['default:g:users:rwx', 'default:group:users:rwx'],
    ['d:m::rx', 'default:mask::rx'],
    ['nobody:rwx', 'user:nobody:rwx'], // bare form = user
    ['65534:r', 'user:65534:r'],
    ['u:john.doe@example.test:r', 'user:john.doe@example.test:r'],
    ['u:HOST$:r', 'user:HOST$:r'],
    ['u:svc-backup:r-w', 'user:svc-backup:r-w'],
    ['u:4294967294:r', 'user:4294967294:r'],
  ])('accepts %s as %s', (text, canonical) => {
    const r = checkAclEntry(text);
    expect(r).toMatchObject({ ok: true, entry: { canonical } });
  });

  it.each([
    ['', /empty/],
    ['-R', /start with "-"/],
    ['--set=u::rwx', /start with "-"/],
    ['-m', /start with "-"/],
    ['u:nobody:rwx,u:root:rwx', /single entry/],
    ['u:nobody:rwx,', /single entry/],
    ['u:nobody:rwx\nu:root:rwx', /whitespace/],
    ['u:no body:r', /whitespace/],
    ['u:nobody:r\t', /whitespace/],
    ['u:a\\040b:r', /backslash/],
    ['u:nobody:rwx\0', /control/],
    ['u:-root:rwx', /not an allowed/],
    ['u:$(id):r', /not an allowed/],
    ['u:`id`:r', /not an allowed/],
    ['u:../etc:r', /not an allowed/],
    ['u:a;b:r', /not an allowed/],
    ['u:4294967295:r', /not an allowed/],
    ['u:01:r', /not an allowed/],
    ['u:nobody', /permissions are missing/],
    ['u:nobody:', /permissions are missing/],
    ['u:nobody:rr', /not valid/],
    ['u:nobody:rwz', /not valid/],
    ['u:nobody:rwxXr', /not valid/],
    ['u:nobody:8', /not valid/],
    ['u:nobody:rwx:x', /expected/],
    ['m:x:rwx', /take no name/],
    ['o:a:b:c', /too many/],
    ['x:nobody:rwx', /unknown entry type/],
    ['d:d:u::r', /unknown entry type/],
    ['default:rwx', /permissions are missing/],
    ['u:' + 'a'.repeat(100) + ':r', /longer than/],
    ['u:' + 'a'.repeat(80) + ':r', /not an allowed/],
  ])('rejects %j', (text, why) => {
    const r = checkAclEntry(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(why);
  });

  it('never accepts anything that could be read as an option or a second entry', () => {
    const samples = ['-', '--', '-x u:a', ',', 'u:a:r,', 'u:a:r\n', '\nu:a:r', ' u:a:r', 'u:a:r '];
    for (const s of samples) expect(checkAclEntry(s).ok, JSON.stringify(s)).toBe(false);
  });
});

describe('checkAclEntry (setfacl -x)', () => {
  it('accepts named entries and the mask, without permissions', () => {
    expect(checkAclEntry('u:nobody', 'remove')).toMatchObject({ ok: true, entry: { canonical: 'user:nobody' } });
    expect(checkAclEntry('u:nobody:', 'remove')).toMatchObject({ ok: true, entry: { canonical: 'user:nobody' } });
    expect(checkAclEntry('d:g:users', 'remove')).toMatchObject({
      ok: true,
      entry: { canonical: 'default:group:users' },
    });
    expect(checkAclEntry('m::', 'remove')).toMatchObject({ ok: true, entry: { canonical: 'mask::' } });
  });
  it('refuses permissions and the base entries', () => {
    expect(checkAclEntry('u:nobody:rwx', 'remove').ok).toBe(false);
    expect(checkAclEntry('user:', 'remove').ok).toBe(false);
    expect(checkAclEntry('g::', 'remove').ok).toBe(false);
    expect(checkAclEntry('o::', 'remove').ok).toBe(false);
  });
});

describe('zod schemas', () => {
  it('turn a bad entry into an issue naming it', () => {
    const r = aclEntryString.safeParse('u:nobody:rwx,u:root:rwx');
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toMatch(/ACL entry "u:nobody:rwx,u:root:rwx": must be a single entry/);
    expect(aclEntryString.safeParse('u:nobody:rwx').success).toBe(true);
    expect(aclRemoveEntryString.safeParse('u:nobody').success).toBe(true);
    expect(aclEntryList.safeParse([]).success).toBe(false);
    const list = aclEntryList.safeParse(['u:a:r', '-b']);
    expect(list.error?.issues[0].path).toEqual([1]);
  });

  it('aclArgument joins the canonical forms for one -m argument', () => {
    expect(aclArgument(['u:nobody:rwx', 'g:users:rx', 'm:rwx'])).toBe('user:nobody:rwx,group:users:rx,mask::rwx');
    expect(() => aclArgument(['u:a:r,u:b:r'])).toThrow();
  });
});
