/**
 * What mount(8)/umount(8) (util-linux 2.38, LC_ALL=C) say when they refuse, mapped to the
 * API's statuses. The routes check the state first (findmnt, lsblk), so these cover what
 * changed in between or what only the kernel can tell (no recognisable filesystem, busy).
 *
 *   mount: /mnt/x: mount point does not exist.                      → 404
 *   mount: /mnt/x: special device /dev/sdz does not exist.          → 404
 *   mount: /mnt/x: /dev/sdb already mounted on /srv/data.           → 409
 *   mount: /mnt/x: /dev/sdb already mounted or mount point busy.    → 409
 *   mount: /mnt/x: mount point is not a directory.                  → 409
 *   mount: /mnt/x: wrong fs type, bad option, bad superblock on ... → 409 (nothing mountable)
 *   mount: /mnt/x: can't read superblock on /dev/sdb.               → 409
 *   mount: /mnt/x: unknown filesystem type 'vfat'.                  → 409 (no kernel driver)
 *   umount: /mnt/x: target is busy.                                 → 409
 *   umount: /mnt/x: not mounted.                                    → 409
 *   umount: /mnt/x: no mount point specified. (path does not exist) → 404
 */
import { ApiError } from '../core/errors';

const RULES: { re: RegExp; status: 404 | 409; say: (what: string) => string }[] = [
  { re: /mount point does not exist/, status: 404, say: (w) => `${w}: the mountpoint does not exist` },
  { re: /special device .* does not exist/, status: 404, say: (w) => `${w}: the device does not exist` },
  { re: /already mounted/, status: 409, say: (w) => `${w}: already mounted (or the mountpoint is busy)` },
  { re: /mount point is not a directory/, status: 409, say: (w) => `${w}: the mountpoint is not a directory` },
  {
    re: /unknown filesystem type/,
    status: 409,
    say: (w) => `${w}: this kernel cannot mount that filesystem type (no driver loaded)`,
  },
  {
    re: /wrong fs type|can't read superblock/,
    status: 409,
    say: (w) => `${w}: the device holds no filesystem that can be mounted`,
  },
  {
    re: /target is busy/,
    status: 409,
    say: (w) => `${w}: the filesystem is busy (files are open or a process has its working directory there)`,
  },
  { re: /: not mounted/, status: 409, say: (w) => `${w}: not mounted` },
  { re: /no mount point specified/, status: 404, say: (w) => `${w}: the mountpoint does not exist` },
];

/** The first line of stderr that matches a known refusal, as an ApiError; null for anything else. */
export function mountError(what: string, stderr: string): ApiError | null {
  for (const rule of RULES) {
    if (rule.re.test(stderr)) {
      const line =
        stderr
          .split('\n')
          .find((l) => rule.re.test(l))
          ?.trim() ?? '';
      return new ApiError(rule.status === 404 ? 'not_found' : 'conflict', rule.say(what), {
        details: { stderr: line },
      });
    }
  }
  return null;
}
