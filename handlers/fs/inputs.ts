/**
 * Request atoms shared by the fs routes. Every path is absolute (core absolutePath: no `..`,
 * NUL or line breaks), so no operand can be read as an option; the routes still put `--`
 * before operands wherever the tool accepts it.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { MKFS_PROGRAM } from './available-fs';

/** A block device node: `/dev/sdb`, `/dev/loop3`, `/dev/disk/by-id/...` (resolved through lsblk). */
export const devicePath = absolutePath.refine(
  (p) => p.startsWith('/dev/') && p.length > 5,
  'must be a device path under /dev/',
);

/**
 * A filesystem named as fstab names it: `UUID=…`, `PARTUUID=…` (hex digits and `-`), `LABEL=…`
 * (letters, digits, `. _ -`, not starting with `-` or `.`: no quoting, no option, no path).
 * Resolved to one block device by `blkid -c /dev/null -t <TAG>=<value> -o device` (facts.ts).
 */
export const TAG_SOURCE_PATTERN =
  /^(?:(?:UUID|PARTUUID)=[0-9A-Fa-f][0-9A-Fa-f-]{0,63}|LABEL=[A-Za-z0-9_][A-Za-z0-9._-]{0,63})$/;
export const mountSource = z.union([
  devicePath,
  z
    .string()
    .regex(
      TAG_SOURCE_PATTERN,
      'must be a device path under /dev/, or UUID=<hex>, PARTUUID=<hex> or LABEL=<letters, digits, . _ ->',
    ),
]);

/** Types make_filesystem knows how to drive (available-fs.ts); whether this box has the helper is checked per request. */
export const fsType = z.enum(Object.keys(MKFS_PROGRAM) as [string, ...string[]]);
