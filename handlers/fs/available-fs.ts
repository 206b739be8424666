/**
 * GET /fs/available_fs: which filesystem types this box can create, derived from the
 * `mkfs.<type>` programs found in /sbin and /usr/sbin (the host lists the two directories;
 * this function only interprets the names, so it is pure and fixture-testable).
 *
 * `device_associated` answers "does creating/mounting this type need a block device?".
 *
 * | name     | from                          | device_associated | note                                 |
 * |----------|-------------------------------|-------------------|--------------------------------------|
 * | ext2     | mkfs.ext2                     | true              | e2fsprogs                            |
 * | ext3     | mkfs.ext3                     | true              |                                      |
 * | ext4     | mkfs.ext4                     | true              |                                      |
 * | xfs      | mkfs.xfs                      | true              | xfsprogs                             |
 * | btrfs    | mkfs.btrfs                    | true              | btrfs-progs                          |
 * | vfat     | mkfs.vfat, mkfs.fat           | true              | dosfstools; mkfs.fat is the same     |
 * |          |                               |                   | program, `fat` is no mount type      |
 * | msdos    | mkfs.msdos                    | true              | dosfstools, FAT without long names   |
 * | exfat    | mkfs.exfat                    | true              | exfatprogs / exfat-utils             |
 * | ntfs     | mkfs.ntfs                     | true              | ntfs-3g                              |
 * | f2fs     | mkfs.f2fs                     | true              |                                      |
 * | jfs      | mkfs.jfs                      | true              |                                      |
 * | nilfs2   | mkfs.nilfs2                   | true              |                                      |
 * | reiserfs | mkfs.reiserfs                 | true              |                                      |
 * | minix    | mkfs.minix                    | true              | util-linux                           |
 * | bfs      | mkfs.bfs                      | true              | util-linux (SCO boot filesystem)     |
 *
 * Deliberately not listed:
 * - `mkfs` (the front end) and `mke2fs`/`mkdosfs` (aliases of listed programs);
 * - `mkfs.cramfs`: builds a read-only image *from a directory*; it is not a device formatter
 *   and make_filesystem cannot drive it;
 * - `mkswap`: swap is not a filesystem; /fs/mount cannot mount it and enabling swap is outside
 *   this API;
 * - `mkfs.zfs` does not exist in OpenZFS (pools are made with `zpool create`); any other
 *   unknown `mkfs.<x>` is ignored rather than guessed at, so a stray script in /usr/sbin does
 *   not become an API-visible type.
 * - memory filesystems (tmpfs, ramfs) have no mkfs program, so they never come from this
 *   scan; were the source ever widened (e.g. /proc/filesystems `nodev` types), they would be
 *   `device_associated: false` — NOT_DEVICE_ASSOCIATED records that decision.
 */
import type { AvailableFs } from './responses';

/** mkfs program suffix → the type name we report (mount(8) `-t` name) */
const KNOWN: Readonly<Record<string, string>> = {
  ext2: 'ext2',
  ext3: 'ext3',
  ext4: 'ext4',
  xfs: 'xfs',
  btrfs: 'btrfs',
  vfat: 'vfat',
  fat: 'vfat',
  msdos: 'msdos',
  exfat: 'exfat',
  ntfs: 'ntfs',
  f2fs: 'f2fs',
  jfs: 'jfs',
  nilfs2: 'nilfs2',
  reiserfs: 'reiserfs',
  minix: 'minix',
  bfs: 'bfs',
};

/** Types that need no block device, should a future source list them (see header). */
export const NOT_DEVICE_ASSOCIATED: ReadonlySet<string> = new Set(['tmpfs', 'ramfs']);

/** mkfs program name (`mkfs.vfat`) for a reported type, for make_filesystem. */
export const MKFS_PROGRAM: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.entries(KNOWN).reduce<Record<string, string[]>>((acc, [suffix, type]) => {
    (acc[type] ??= []).push(`mkfs.${suffix}`);
    return acc;
  }, {}),
);

/**
 * @param fileNames entries of /sbin and /usr/sbin (base names; duplicates fine, since on a
 *   merged-/usr system both directories are the same one)
 * @returns one entry per type, sorted by name
 */
export function availableFilesystems(fileNames: readonly string[]): AvailableFs[] {
  const types = new Set<string>();
  for (const file of fileNames) {
    const m = /^mkfs\.([a-z0-9]+)$/.exec(file);
    if (!m) continue;
    const type = KNOWN[m[1]];
    if (type) types.add(type);
  }
  return [...types].sort().map((name) => ({ name, device_associated: !NOT_DEVICE_ASSOCIATED.has(name) }));
}
