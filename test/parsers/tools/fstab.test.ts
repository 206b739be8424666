/** /etc/fstab (handlers/tools/fstab.ts): read and written back the same way. */
import { describe, expect, it } from 'vitest';
import { decodeFstab, encodeFstab, parseFstab } from '../../../handlers/tools/fstab';
import { parseError } from '../../helpers/parse-error';

// the shape of jc's ubuntu-18.04 fstab fixture (upstream-samples/fstab), with a comment after the fields
const FSTAB_SAMPLE =
  'LABEL=cloudimg-rootfs\t/\t ext4\tdefaults\t0 0\n/dev/sda2 none swap sw 0 0    # this is a comment\n';

describe('fstab', () => {
  it('reads fstab lines (fields 5 and 6 optional, trailing comments, octal escapes)', () => {
    const e = parseFstab(
      `${FSTAB_SAMPLE}\n/dev/sdz1 /srv/with\\040space xfs defaults\nUUID=x /srv/pods xfs rw,noatime,acl,user_xattr 0 2 # ballast:pod-data\n`,
    );
    const last = e[e.length - 1];
    expect(e[e.length - 2]).toMatchObject({
      fs_spec: '/dev/sdz1',
      fs_file: '/srv/with space',
      fs_freq: 0,
      fs_passno: 0,
    });
    expect(last).toMatchObject({
      fs_spec: 'UUID=x',
      fs_file: '/srv/pods',
      fs_vfstype: 'xfs',
      fs_mntops: ['rw', 'noatime', 'acl', 'user_xattr'],
      fs_freq: 0,
      fs_passno: 2,
    });
  });
  it('refuses short and non-numeric lines', () => {
    expect(parseError(() => parseFstab('# c\n/dev/sda1 /\n')).line).toBe(2);
    expect(parseError(() => parseFstab('/dev/sda1 / ext4 defaults x 1\n')).message).toMatch(/fs_freq/);
  });
  it('encodes blanks and backslashes so a field reads back as written', () => {
    const odd = '/srv/a b\tc\\d';
    expect(encodeFstab(odd)).toBe('/srv/a\\040b\\011c\\134d');
    expect(decodeFstab(encodeFstab(odd))).toBe(odd);
    expect(parseFstab(`${encodeFstab(odd)} ${encodeFstab('/mnt/x y')} none bind 0 0\n`)[0]).toMatchObject({
      fs_spec: odd,
      fs_file: '/mnt/x y',
    });
  });
});
