/**
 * POST /fs/explore: the contract between the route and the host operation that walks the tree
 * (runtime/system/ops/fs-explore.ts). Route code cannot stat (no node: in handlers/), so the
 * host walks and answers entries already in the spec's shape; the route validates the request,
 * asks, and checks the answer against the same schemas.
 *
 * Limits (documented in handlers/fs/README.md):
 *   depth        levels listed below fs_path; 1 = only its direct entries. Default 32, max 4096.
 *   maxEntries   entries returned in the whole tree. Default 100 000 (or the configured
 *                ceiling if lower); at most `settings.fs.exploreMaxEntries` (default 250 000).
 *   oneFileSystem  stay on fs_path's filesystem (like `find -xdev`): a directory on another
 *                device is listed but not entered. Default true, so exploring `/` does not walk
 *                /proc, /sys or every mounted disk.
 * Symbolic links are listed (isSymbolicLink) and never followed; only fs_path itself is
 * resolved (like `find -H`), and its real path must lie inside `settings.fs.readRoots`.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';

export const EXPLORE_OP = 'fs/explore';

export const EXPLORE_DEFAULT_DEPTH = 32;
export const EXPLORE_MAX_DEPTH = 4096;
export const EXPLORE_DEFAULT_ENTRIES = 100_000;
/** Default of `settings.fs.exploreMaxEntries`: ~550 bytes of JSON per entry, so ~140 MB. */
export const EXPLORE_ENTRY_CEILING = 250_000;
/** What any request may ask for at all; the configured ceiling is usually lower. */
export const EXPLORE_ABSOLUTE_MAX_ENTRIES = 5_000_000;

/**
 * `settings.fs` of the host config (all optional):
 *   readRoots          directories explore and the checksum-file reader may read below
 *                      (default ["/"]: an operator tool on its own appliance; narrow it if the
 *                      API is exposed to less trusted callers)
 *   exploreMaxEntries  the largest maxEntries a request may ask for
 */
export const fsSettingsSchema = z.strictObject({
  readRoots: z.array(absolutePath).min(1).default(['/']),
  exploreMaxEntries: z.number().int().min(1).max(EXPLORE_ABSOLUTE_MAX_ENTRIES).default(EXPLORE_ENTRY_CEILING),
});
export type FsSettings = z.infer<typeof fsSettingsSchema>;

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
    .describe(`entries to return in the whole tree; default ${EXPLORE_DEFAULT_ENTRIES}, at most settings.fs.exploreMaxEntries (default ${EXPLORE_ENTRY_CEILING})`),
  oneFileSystem: z.boolean().optional().describe('do not enter directories on another filesystem (default true)'),
});
export type ExploreBody = z.infer<typeof exploreBody>;

/** The host operation's payload: the body with its defaults still open (the host knows the ceiling). */
export const exploreOpPayload = z.strictObject({
  path: absolutePath,
  depth: z.number().int().min(1).max(EXPLORE_MAX_DEPTH).optional(),
  maxEntries: z.number().int().min(1).max(EXPLORE_ABSOLUTE_MAX_ENTRIES).optional(),
  oneFileSystem: z.boolean().optional(),
});
export type ExploreOpPayload = z.infer<typeof exploreOpPayload>;

/**
 * One entry, exactly the spec's fields (the fs.Stats numbers, ISO times, name, path, type
 * booleans, children, file_num) plus `truncated`, present only on a directory whose children
 * explore did not (all) read: depth limit, entry cap, another filesystem, or unreadable.
 * file_num is the number of entries in `children` (0 for anything but a directory).
 */
const n = z.number();
const iso = z.string();
export const exploreEntrySchema = z.object({
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
  atime: iso,
  mtime: iso,
  ctime: iso,
  birthtime: iso,
  name: z.string(),
  path: z.string(),
  isSymbolicLink: z.boolean(),
  isBlockDevice: z.boolean(),
  isDirectory: z.boolean(),
  isFile: z.boolean(),
  get children() {
    return z.array(exploreEntrySchema);
  },
  file_num: z.number().int().nonnegative(),
  truncated: z.literal(true).optional(),
});
export type ExploreEntry = z.infer<typeof exploreEntrySchema>;

export const truncationReason = z.enum(['depth', 'entries', 'device', 'unreadable']);
export type TruncationReason = z.infer<typeof truncationReason>;

export const exploreResultSchema = z.object({
  files: z.array(exploreEntrySchema),
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
export type ExploreResult = z.infer<typeof exploreResultSchema>;

export const MAX_EXPLORE_ERRORS = 100;
