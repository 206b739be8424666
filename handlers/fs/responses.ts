/**
 * What the fs routes answer (the spec's shapes): `xxxAnswer` for a route's answer and the pieces
 * answers are built of. Routes that answer a message answer `z.string()` in place. What the
 * parsers read out of command output is typed beside each parser (parse/, handlers/tools/).
 *
 * Naming: camelCase for our own fields; field names the spec fixes (`fileName`, `hash`,
 * `result`, `device_associated`, `name`, `file_num`) are kept exactly.
 */
import * as z from 'zod';

// ---------------------------------------------------------------------------------------------
// GET /fs/available_fs
// ---------------------------------------------------------------------------------------------

export const availableFs = z.object({ name: z.string(), device_associated: z.boolean() });
export type AvailableFs = z.infer<typeof availableFs>;
export const availableFsAnswer = z.array(availableFs);

// ---------------------------------------------------------------------------------------------
// POST /fs/explore (handlers/fs/explore.ts builds it from the host op's compact tree)
// ---------------------------------------------------------------------------------------------

/**
 * One entry, exactly the spec's fields (the fs.Stats numbers, ISO times, name, path, type
 * booleans, children, file_num) plus `truncated`, present only on a directory whose children
 * explore did not (all) read: depth limit, entry cap, another filesystem, or unreadable.
 * file_num is the number of entries in `children` (0 for anything but a directory).
 */
const n = z.number();
const isoText = z.string();
export const exploreEntry = z.object({
  dev: n,
  mode: n,
  nlink: n,
  uid: n,
  gid: n,
  rdev: n,
  blksize: n,
  ino: n,
  size: n,
  blocks: n,
  atimeMs: n,
  mtimeMs: n,
  ctimeMs: n,
  birthtimeMs: n,
  atime: isoText,
  mtime: isoText,
  ctime: isoText,
  birthtime: isoText,
  name: z.string(),
  path: z.string(),
  isSymbolicLink: z.boolean(),
  isBlockDevice: z.boolean(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  get children() {
    return z.array(exploreEntry);
  },
  file_num: z.number().int().nonnegative(),
  truncated: z.literal(true).optional(),
});
export type ExploreEntry = z.infer<typeof exploreEntry>;

export const truncationReason = z.enum(['depth', 'entries', 'device', 'unreadable']);
export type TruncationReason = z.infer<typeof truncationReason>;

export const exploreAnswer = z.object({
  files: z.array(exploreEntry),
  /** entries in the whole tree (every level), i.e. what `files` holds recursively */
  total: z.number().int().nonnegative(),
  /** true when some directory's children were not (all) listed; see `truncatedBy` */
  truncated: z.boolean(),
  truncatedBy: z.array(truncationReason),
  /** the limits this answer was produced under, defaults applied */
  limits: z.object({ depth: z.number().int(), maxEntries: z.number().int(), oneFileSystem: z.boolean() }),
  /** directories that could not be read (at most 100 listed) */
  errors: z.array(z.object({ path: z.string(), message: z.string() })),
});
export type ExploreAnswer = z.infer<typeof exploreAnswer>;

// ---------------------------------------------------------------------------------------------
// POST /fs/make_directory, /fs/xxhash, /fs/xxhash_verify
// ---------------------------------------------------------------------------------------------

export const makeDirectoryAnswer = z.object({ destination: z.string() });

export const xxhashAnswer = z.object({ sums: z.array(z.object({ hash: z.string(), fileName: z.string() })) });
export type XxhashAnswer = z.infer<typeof xxhashAnswer>;

export const xxhashVerifyAnswer = z.object({
  results: z.array(z.object({ fileName: z.string(), result: z.enum(['OK', 'FAILED', 'FAILED open or read']) })),
  verified: z.boolean(),
});
export type XxhashVerifyAnswer = z.infer<typeof xxhashVerifyAnswer>;
