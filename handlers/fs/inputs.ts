/**
 * Request atoms shared by the fs routes. Every path is absolute (core absolutePath: no `..`,
 * NUL or line breaks), so no operand can be read as an option; the routes still put `--`
 * before operands wherever the tool accepts it.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { MKFS_PROGRAM } from './available-fs';

/** A block device node: `/dev/sdb`, `/dev/loop3`, `/dev/disk/by-id/...` (resolved through lsblk). */
export const devicePath = absolutePath.refine((p) => p.startsWith('/dev/') && p.length > 5, 'must be a device path under /dev/');

/** Types make_filesystem knows how to drive (available-fs.ts); whether this box has the helper is checked per request. */
export const fsType = z.enum(Object.keys(MKFS_PROGRAM) as [string, ...string[]]);
