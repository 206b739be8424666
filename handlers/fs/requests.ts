/**
 * What a client sends to the fs routes: one `xxxBody` per route that takes a body (xxhash and
 * xxhash_verify keep theirs in the route: build.mjs reads a route's error statuses from the
 * text of everything it imports, and this file's would add a conflict status those two never
 * answer). Every path is
 * absolute (core absolutePath: no `..`, NUL or line breaks), so no operand can be read as an
 * option; the routes still put `--` before operands wherever the tool accepts it.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { aclEntryList } from './acl';
import { MKFS_PROGRAM } from './available-fs';
import { checkDirectoryOptions } from './directory-options';
import {
  EXPLORE_ABSOLUTE_MAX_ENTRIES,
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  EXPLORE_ENTRY_CEILING,
  EXPLORE_MAX_DEPTH,
} from './explore';
import { checkMkfsOptions, mkfsOptions } from './mkfs-options';

/** A block device node: `/dev/sdb`, `/dev/loop3`, `/dev/disk/by-id/...` (resolved through lsblk). */
const devicePath = absolutePath.refine(
  (p) => p.startsWith('/dev/') && p.length > 5,
  'must be a device path under /dev/',
);

/**
 * A filesystem named as fstab names it: `UUID=…`, `PARTUUID=…` (hex digits and `-`), `LABEL=…`
 * (letters, digits, `. _ -`, not starting with `-` or `.`: no quoting, no option, no path).
 * Resolved to one block device by `blkid -c /dev/null -t <TAG>=<value> -o device` (facts.ts).
 */
const TAG_SOURCE_PATTERN =
  /^(?:(?:UUID|PARTUUID)=[0-9A-Fa-f][0-9A-Fa-f-]{0,63}|LABEL=[A-Za-z0-9_][A-Za-z0-9._-]{0,63})$/;
const mountSource = z.union([
  devicePath,
  z
    .string()
    .regex(
      TAG_SOURCE_PATTERN,
      'must be a device path under /dev/, or UUID=<hex>, PARTUUID=<hex> or LABEL=<letters, digits, . _ ->',
    ),
]);

/** Types make_filesystem knows how to drive (available-fs.ts); whether this box has the helper is checked per request. */
const fsType = z.enum(Object.keys(MKFS_PROGRAM) as [string, ...string[]]);

// ---- POST /fs/explore ----

export const exploreBody = z.strictObject({
  fs_path: absolutePath.describe('directory to list, absolute'),
  depth: z
    .number()
    .int()
    .min(1)
    .max(EXPLORE_MAX_DEPTH)
    .optional()
    .describe(`levels to list below fs_path (1 = its direct entries); default ${EXPLORE_DEFAULT_DEPTH}`),
  maxEntries: z
    .number()
    .int()
    .min(1)
    .max(EXPLORE_ABSOLUTE_MAX_ENTRIES)
    .optional()
    .describe(
      `entries to return in the whole tree; default ${EXPLORE_DEFAULT_ENTRIES}, at most settings.fs.exploreMaxEntries (default ${EXPLORE_ENTRY_CEILING})`,
    ),
  oneFileSystem: z.boolean().optional().describe('do not enter directories on another filesystem (default true)'),
});
export type ExploreBody = z.infer<typeof exploreBody>;

// ---- POST /fs/make_filesystem ----

export const makeFilesystemBody = z
  .strictObject({
    device: devicePath.describe('block device to format, e.g. /dev/sdb'),
    type: fsType.describe('filesystem type (see GET /fs/available_fs)'),
    options: mkfsOptions
      .optional()
      .describe('mkfs options for this type, one argv element each: ["-L", "data", "-m", "1"]; whitelisted per type'),
    force: z
      .boolean()
      .optional()
      .describe(
        'extension: format even though the device carries a filesystem or partition-table signature (it is wiped first)',
      ),
  })
  .superRefine((b, ctx) => {
    const r = checkMkfsOptions(b.type, b.options);
    if (!r.ok) ctx.addIssue({ code: 'custom', path: ['options'], message: r.message });
  });

// ---- POST /fs/mount ----

export const mountBody = z.strictObject({
  device: mountSource.describe(
    'block device holding the filesystem, e.g. /dev/sdb, or as fstab names it: UUID=<uuid>, PARTUUID=<uuid>, LABEL=<label> (resolved with blkid to exactly one device: none is a 404, several a 409)',
  ),
  mountpoint: absolutePath.describe('existing directory to mount it on, absolute'),
});

// ---- POST /fs/unmount ----

export const unmountBody = z.strictObject({
  device: devicePath.optional().describe('optional: when given, it must be what is mounted there'),
  mountpoint: absolutePath.describe('the mountpoint to unmount, absolute'),
});

// ---- POST /fs/make_directory ----

export const makeDirectoryBody = z
  .strictObject({
    destination: absolutePath.describe('directory to create (parents too), absolute'),
    options: z
      .array(z.string().max(256))
      .max(6)
      .optional()
      .describe(
        'install(1) options, one argv element each, limited to mode, owner and group: ["-m", "0750", "-o", "backup", "-g", "staff"]',
      ),
  })
  .superRefine((b, ctx) => {
    const r = checkDirectoryOptions(b.options);
    if (!r.ok) ctx.addIssue({ code: 'custom', path: ['options'], message: r.message });
  });

// ---- POST /fs/set_permissions ----

export const setPermissionsBody = z
  .strictObject({
    path: absolutePath.describe('file or directory, absolute'),
    acls: aclEntryList
      .optional()
      .describe(
        'ACL entries for setfacl -m, e.g. ["u:backup:rwx", "g:staff:r-x", "m::rwx"]; optional with test (without entries, test lists the current ACLs: getfacl), required otherwise',
      ),
    acl: aclEntryList.optional().describe("the same as acls (the name the spec's usage example sends)"),
    defaults: z.boolean().optional().describe('apply the entries to the default ACL (setfacl -d)'),
    recursive: z
      .boolean()
      .optional()
      .describe('apply to everything below path (setfacl -R; symlinks below are not followed)'),
    test: z
      .boolean()
      .optional()
      .describe(
        'change nothing; answer the ACLs that would result (setfacl --test), or without acls the current ACLs (getfacl -p)',
      ),
  })
  .superRefine((b, ctx) => {
    if (b.acls && b.acl) ctx.addIssue({ code: 'custom', path: ['acl'], message: 'give either acls or acl, not both' });
    if (!b.acls && !b.acl && !b.test) {
      ctx.addIssue({
        code: 'custom',
        path: ['acls'],
        message:
          'at least one ACL entry is required to change ACLs (send test: true without acls to list the current ones)',
      });
    }
  })
  .transform(({ acl, acls, ...rest }) => ({ ...rest, entries: acls ?? acl ?? [] }));
