/**
 * POST /fs/explore: what the route and the host operation that walks the tree
 * (runtime/areas/fs/explore.ts) share. Route code cannot stat (no node: in handlers/), so the
 * host walks and answers the entries in a compact form (below); the route validates the request
 * (requests.ts exploreBody), asks, and builds the spec's answer from it (responses.ts
 * exploreAnswer). The host side reaches these through contract.ts.
 *
 * Limits (documented in handlers/fs/README.md):
 *   depth        levels listed below fs_path; 1 = only its direct entries. Default 32, max 4096.
 *   maxEntries   entries returned in the whole tree. Default 100 000 (or the ceiling, if
 *                lower); at most `settings.fs.exploreMaxEntries` (default 100 000).
 *   oneFileSystem  stay on fs_path's filesystem (like `find -xdev`): a directory on another
 *                device is listed but not entered. Default true, so exploring `/` does not walk
 *                /proc, /sys or every mounted disk.
 * Symbolic links are listed (isSymbolicLink) and never followed; only fs_path itself is
 * resolved (like `find -H`), and its real path must lie inside `settings.fs.readRoots`.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { exploreAnswer, type ExploreAnswer, type ExploreEntry } from './responses';

export const EXPLORE_OP = 'fs/explore';

export const EXPLORE_DEFAULT_DEPTH = 32;
export const EXPLORE_MAX_DEPTH = 4096;
export const EXPLORE_DEFAULT_ENTRIES = 100_000;
/**
 * Default of `settings.fs.exploreMaxEntries`. An answer costs ~570 bytes of JSON per entry, and
 * as many bytes on the wire and in the client. A tree the cap does not cut is streamed (the host
 * holds the open directories, ~0.16 GB peak RSS of the host measured at 100 000 entries); one it
 * cuts is held as a compact tree first (~310 bytes an entry), so a larger ceiling is a
 * deliberate choice of the operator.
 */
export const EXPLORE_ENTRY_CEILING = 100_000;
/** What any request may ask for at all; the configured ceiling is usually lower. */
export const EXPLORE_ABSOLUTE_MAX_ENTRIES = 5_000_000;

/** The host operation's payload: the body with its defaults still open (the host knows the ceiling). */
export const exploreOpPayload = z.strictObject({
  path: absolutePath,
  depth: z.number().int().min(1).max(EXPLORE_MAX_DEPTH).optional(),
  maxEntries: z.number().int().min(1).max(EXPLORE_ABSOLUTE_MAX_ENTRIES).optional(),
  oneFileSystem: z.boolean().optional(),
});
export type ExploreOpPayload = z.infer<typeof exploreOpPayload>;

export const MAX_EXPLORE_ERRORS = 100;

// ---------------------------------------------------------------------------------------------
// The host operation's answer: the same tree, compact
// ---------------------------------------------------------------------------------------------

/**
 * The SYSTEM binding carries JSON, serialised by the host and parsed again by the route; at
 * 100 000 entries the spec's objects (26 named fields, four ISO times and a full path each) are
 * ~57 MB of it. The host therefore answers each entry as
 *   [name, flags, [the 14 numbers of STAT_FIELDS, in that order], children]
 * and the route rebuilds the spec's objects (expandExplore): paths from the names, ISO times
 * from the milliseconds, the type booleans from the flags, file_num from the children.
 */
export const STAT_FIELDS = [
  'dev',
  'mode',
  'nlink',
  'uid',
  'gid',
  'rdev',
  'blksize',
  'ino',
  'size',
  'blocks',
  'atimeMs',
  'mtimeMs',
  'ctimeMs',
  'birthtimeMs',
] as const;
export const STAT_INDEX = Object.fromEntries(STAT_FIELDS.map((f, i) => [f, i])) as {
  readonly [K in (typeof STAT_FIELDS)[number]]: number;
};

/** bits of a compact entry's flags */
export const FLAG = { symbolicLink: 1, blockDevice: 2, directory: 4, file: 8, truncated: 16 } as const;

/** zod cannot infer a recursive tuple, so its type is written out once here */
export type CompactEntry = [name: string, flags: number, stats: number[], children: CompactEntry[]];
export const compactEntry: z.ZodType<CompactEntry> = z.lazy(() =>
  z.tuple([
    z.string(),
    z.number().int().nonnegative(),
    z.array(z.number()).length(STAT_FIELDS.length),
    z.array(compactEntry),
  ]),
);

export const exploreOpResult = exploreAnswer.omit({ files: true }).extend({
  /** fs_path as it is shown (normalised, not resolved): the prefix of every path */
  path: z.string(),
  entries: z.array(compactEntry),
});
export type ExploreOpResult = z.infer<typeof exploreOpResult>;

/** Date's range of time values (ECMA-262 TimeClip); a timestamp outside it has no ISO text. */
const MAX_TIME = 8.64e15;
let lastMs = Number.NaN;
let lastIso = '';
/** the second the text below was made for, and its text up to the milliseconds (`…:SS.`) */
let second = Number.NaN;
let secondText = '';

/**
 * `new Date(ms).toISOString()`, or the epoch's text outside Date's range (a corrupt inode must
 * not fail the whole answer). toISOString was ~0.6 µs a call, 4 calls an entry: the last answer
 * is kept (a fresh file's four times are equal), and so is the text of the last second, to
 * which the milliseconds are added (a tree's files are often written within a second).
 */
export function isoTime(ms: number): string {
  if (ms === lastMs) return lastIso;
  lastMs = ms;
  if (!(Math.abs(ms) <= MAX_TIME)) return (lastIso = new Date(0).toISOString()); // NaN too
  const t = Math.trunc(ms); // what Date keeps of a fractional time value
  const sec = Math.floor(t / 1000);
  if (sec !== second) {
    const text = new Date(t).toISOString();
    second = sec;
    secondText = text.slice(0, -4); // without `mmmZ`
  }
  const milli = t - sec * 1000;
  return (lastIso = `${secondText}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`);
}

/**
 * One entry in the spec's shape, from its compact fields: the STAT_FIELDS numbers are `st[o]`
 * to `st[o + 13]` (`file_num` is the count of `children` unless given).
 */
export function entryObject(
  name: string,
  flags: number,
  st: ArrayLike<number>,
  o: number,
  path: string,
  children: ExploreEntry[],
  fileNum = children.length,
): ExploreEntry {
  const entry: ExploreEntry = {
    dev: st[o],
    mode: st[o + 1],
    nlink: st[o + 2],
    uid: st[o + 3],
    gid: st[o + 4],
    rdev: st[o + 5],
    blksize: st[o + 6],
    ino: st[o + 7],
    size: st[o + 8],
    blocks: st[o + 9],
    atimeMs: st[o + 10],
    mtimeMs: st[o + 11],
    ctimeMs: st[o + 12],
    birthtimeMs: st[o + 13],
    atime: isoTime(st[o + 10]),
    mtime: isoTime(st[o + 11]),
    ctime: isoTime(st[o + 12]),
    birthtime: isoTime(st[o + 13]),
    name,
    path,
    isSymbolicLink: (flags & FLAG.symbolicLink) !== 0,
    isBlockDevice: (flags & FLAG.blockDevice) !== 0,
    isDirectory: (flags & FLAG.directory) !== 0,
    isFile: (flags & FLAG.file) !== 0,
    children,
    file_num: fileNum,
  };
  if (flags & FLAG.truncated) entry.truncated = true;
  return entry;
}

/** The compact flags of an lstat's mode (what Stats.isSymbolicLink() and the others test). */
export function flagsOfMode(mode: number): number {
  const type = mode & 0o170000; // S_IFMT
  return (
    (type === 0o120000 ? FLAG.symbolicLink : 0) | // S_IFLNK
    (type === 0o060000 ? FLAG.blockDevice : 0) | // S_IFBLK
    (type === 0o040000 ? FLAG.directory : 0) | // S_IFDIR
    (type === 0o100000 ? FLAG.file : 0) // S_IFREG
  );
}

/** `parent` + `/` (`/` stays `/`): the prefix of its children's paths */
export const childPrefix = (parent: string) => (parent === '/' ? '/' : `${parent}/`);

function expandEntries(list: readonly CompactEntry[], parent: string): ExploreEntry[] {
  const prefix = childPrefix(parent);
  return list.map(([name, flags, st, kids]) => {
    const path = prefix + name;
    return entryObject(name, flags, st, 0, path, expandEntries(kids, path));
  });
}

/** The spec's answer from the host operation's compact one. */
export function expandExplore(r: ExploreOpResult): ExploreAnswer {
  return {
    files: expandEntries(r.entries, r.path),
    total: r.total,
    truncated: r.truncated,
    truncatedBy: r.truncatedBy,
    limits: r.limits,
    errors: r.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// The same tree as a stream (the Node host, in-process): memory bounded by depth, not entries
// ---------------------------------------------------------------------------------------------

/**
 * A batch of a streamed walk's entries, in pre-order: a directory's `childCounts[k]` entries
 * follow it (each followed by its own). Column by column: entry k is `names[k]`, `flags[k]`
 * (with FLAG.truncated), the STAT_FIELDS numbers `stats[k * STAT_STRIDE ...]` and
 * `childCounts[k]`. Not an array of tuples: those were five objects an entry on the host's heap
 * (the tuple, its numbers, the listing's entry it was copied from, each directory's empty
 * children), most of them living long enough to be promoted, which drove the host's peak RSS.
 */
export interface ExploreRecords {
  readonly names: string[];
  readonly flags: number[];
  readonly stats: number[];
  readonly childCounts: number[];
}

/** numbers per entry in ExploreRecords' `stats` */
export const STAT_STRIDE = STAT_FIELDS.length;

/** What follows `files` in the answer: known once the records have ended. */
export type ExploreTrailer = Pick<ExploreAnswer, 'total' | 'truncated' | 'truncatedBy' | 'errors'>;

/**
 * The walk's answer while it is still walking: the host hands this to the route in place of
 * ExploreOpResult when both live in one process (the binding protocol carries the collected
 * ExploreOpResult). `records()` may be iterated once; leaving it early stops the walk.
 */
export interface ExploreStream {
  readonly kind: 'explore-stream';
  /** fs_path as shown (the prefix of every path) */
  readonly path: string;
  readonly limits: ExploreAnswer['limits'];
  records(): AsyncIterable<ExploreRecords>;
  /** valid once records() has ended */
  trailer(): ExploreTrailer;
}

export function isExploreStream(v: unknown): v is ExploreStream {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'explore-stream';
}

/** The compact tree of a stream (what the binding protocol carries): consumes it. */
export async function collectExplore(s: ExploreStream): Promise<ExploreOpResult> {
  const entries: CompactEntry[] = [];
  // open directories: the list their children go into and how many are still to come
  const open: { list: CompactEntry[]; left: number }[] = [{ list: entries, left: Infinity }];
  for await (const b of s.records()) {
    for (let k = 0; k < b.names.length; k++) {
      const childCount = b.childCounts[k];
      const top = open[open.length - 1];
      const o = k * STAT_STRIDE;
      const entry: CompactEntry = [b.names[k], b.flags[k], b.stats.slice(o, o + STAT_STRIDE), []];
      top.list.push(entry);
      top.left--;
      if (childCount > 0) open.push({ list: entry[3], left: childCount });
      else while (open.length > 1 && open[open.length - 1].left === 0) open.pop();
    }
  }
  return { path: s.path, entries, limits: s.limits, ...s.trailer() };
}
