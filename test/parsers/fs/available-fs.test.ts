import { describe, expect, it } from 'vitest';
import { availableFilesystems, MKFS_PROGRAM } from '../../../handlers/fs/available-fs';
import { availableFs } from '../../../handlers/fs/responses';

/** `ls /usr/sbin | grep -E '^(mk|mkfs)'` on the reference Debian 12 box (merged /usr: /sbin is the same) */
const THIS_BOX = [
  'mkdosfs',
  'mke2fs',
  'mkfs',
  'mkfs.bfs',
  'mkfs.cramfs',
  'mkfs.ext2',
  'mkfs.ext3',
  'mkfs.ext4',
  'mkfs.fat',
  'mkfs.minix',
  'mkfs.msdos',
  'mkfs.vfat',
  'mkfs.xfs',
  'mkhomedir_helper',
  'mklost+found',
  'mkswap',
];

describe('availableFilesystems', () => {
  it('lists the reference box, sorted, without aliases, cramfs or swap', () => {
    const list = availableFilesystems([...THIS_BOX, ...THIS_BOX]); // /sbin and /usr/sbin
    expect(list).toEqual([
      { name: 'bfs', device_associated: true },
      { name: 'ext2', device_associated: true },
      { name: 'ext3', device_associated: true },
      { name: 'ext4', device_associated: true },
      { name: 'minix', device_associated: true },
      { name: 'msdos', device_associated: true },
      { name: 'vfat', device_associated: true },
      { name: 'xfs', device_associated: true },
    ]);
    for (const e of list) expect(availableFs.parse(e)).toEqual(e);
  });

  it('adds the other known formatters and ignores unknown or odd names', () => {
    const names = [
      'mkfs.btrfs',
      'mkfs.exfat',
      'mkfs.ntfs',
      'mkfs.f2fs',
      'mkfs.zfs',
      'mkfs.evil;rm',
      'mkfs.',
      'mkfs.EXT4',
      'xmkfs.ext4',
    ];
    expect(availableFilesystems(names).map((e) => e.name)).toEqual(['btrfs', 'exfat', 'f2fs', 'ntfs']);
    expect(availableFilesystems([])).toEqual([]);
  });

  it('knows which program makes each type', () => {
    expect(MKFS_PROGRAM.vfat).toEqual(['mkfs.vfat', 'mkfs.fat']);
    expect(MKFS_PROGRAM.ext4).toEqual(['mkfs.ext4']);
  });
});
