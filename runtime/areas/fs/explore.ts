/**
 * Host side of POST /fs/explore: a read-only, bounded walk of a directory tree.
 *
 * How it stays cheap on a large tree:
 * - directories are read in breadth-first order with opendir (streamed in small buffers), so
 *   a directory with millions of names costs only as many as the entry cap still allows;
 * - every entry is lstat'ed exactly once. On a local filesystem (LOCAL_FS_TYPES, by statfs
 *   once per device) directories are read and entries lstat'ed synchronously, SYNC_LSTAT_BATCH
 *   at a time between event-loop turns: one libuv round trip per entry cost 4-6x the lstat.
 *   On any other filesystem (NFS, CIFS, FUSE, unknown) through a concurrency limit
 *   (LSTAT_CONCURRENCY calls in flight on libuv's pool, with the callback API: a promise chain
 *   per entry costs more than the stat), so a slow or hung network filesystem holds up this
 *   walk, never the host's event loop. Both give the same answer;
 * - entries are answered in the compact form of handlers/fs/explore.ts (a tuple each; the
 *   route rebuilds the spec's objects), a quarter of the bytes through the SYSTEM binding;
 * - the walk stops taking names at `maxEntries` and does not enter directories deeper than
 *   `depth`, or (by default) on another filesystem: the compact tree is O(entries returned)
 *   (~31 MB live for 100 000 entries); the route streams the JSON from it (explore-json.ts);
 * - one walk at a time (EXPLORE_CONCURRENCY); a few more wait in a queue, then 503 busy.
 *
 * Safety: lstat only, so a symbolic link is an entry and never a way out of the tree; only
 * the requested path itself is resolved (like `find -H`), and its real path must lie inside one
 * of the configured read roots. Nothing is opened for writing, nothing is changed.
 *
 * Order: each directory's children are sorted by name (JS string order), so answers are
 * stable. Which names of a directory are kept when the cap cuts it is readdir's order.
 */
import type { Dirent, Stats } from 'node:fs';
import { lstat as lstatCb, lstatSync, opendirSync } from 'node:fs';
import { lstat, opendir, realpath, stat, statfs } from 'node:fs/promises';
import { posix } from 'node:path';
import {
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  FLAG,
  MAX_EXPLORE_ERRORS,
  STAT_INDEX,
  type CompactEntry,
  type ExploreOpPayload,
  type ExploreOpResult,
  type TruncationReason,
} from '../../../handlers/fs/contract';
import { Semaphore } from '../../system/semaphore';
import { SystemRefusal } from '../../system/types';

/** lstat calls in flight (libuv's pool has 4 threads; 32 keeps them busy) */
const LSTAT_CONCURRENCY = 32;
/**
 * Whole walks at once, and how many may wait (then 503 busy). One: each answer holds up to
 * maxEntries entries in memory several times over while the route builds it, so walks queue
 * rather than stack; the route's part of one overlaps with the next walk.
 */
const EXPLORE_CONCURRENCY = 1;
const EXPLORE_QUEUE = 4;
/** names per readdir call under opendir (Node's default is 32) */
const DIR_BUFFER = 256;
/**
 * lstat calls made synchronously in one event-loop turn before the walk yields (setImmediate)
 * to the rest of the host: ~1-4 ms of blocking on a local disk with a warm cache.
 */
const SYNC_LSTAT_BATCH = 256;
/**
 * Filesystems (statfs f_type) on which the walk lstat's synchronously, in batches: local block
 * or memory filesystems, where an lstat is a few microseconds. One libuv round trip per entry
 * cost 4-6x the lstat itself (measured: 100 000 async lstats 2.1-2.7 s, synchronous 0.4 s, on
 * 2 cores). Anything else (NFS, CIFS, FUSE, unknown) keeps the async pool, so a hung network
 * filesystem holds up the walk but never the host's event loop.
 */
export const LOCAL_FS_TYPES: ReadonlySet<number> = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
  0x01021994, // tmpfs
  0x858458f6, // ramfs
  0x794c7630, // overlayfs
]);

export interface ExploreOptions {
  /** real paths (already resolved) that requests may explore below */
  roots: readonly string[];
  /** the largest maxEntries a request may ask for */
  maxEntriesCeiling: number;
  /** statfs types read synchronously (default LOCAL_FS_TYPES; tests pass an empty set for the async path) */
  localFsTypes?: ReadonlySet<number>;
}

const walks = new Semaphore(EXPLORE_CONCURRENCY, EXPLORE_QUEUE);

/** `/a/b` is inside `/a` and `/`; `/ab` is not inside `/a`. */
export function isInside(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/** One entry in the compact form of handlers/fs/explore.ts (the route rebuilds the spec's object). */
function toEntry(s: Stats, name: string): CompactEntry {
  const flags =
    (s.isSymbolicLink() ? FLAG.symbolicLink : 0) |
    (s.isBlockDevice() ? FLAG.blockDevice : 0) |
    (s.isDirectory() ? FLAG.directory : 0) |
    (s.isFile() ? FLAG.file : 0);
  // the order of STAT_FIELDS
  const stats = [
    s.dev,
    s.mode,
    s.nlink,
    s.uid,
    s.gid,
    s.rdev,
    s.blksize,
    s.ino,
    s.size,
    s.blocks,
    s.atimeMs,
    s.mtimeMs,
    s.ctimeMs,
    s.birthtimeMs,
  ];
  return [name, flags, stats, []];
}

/** `/` + name, or dir + `/` + name (no normalisation: names are single components) */
const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

const isDir = (e: CompactEntry) => (e[1] & FLAG.directory) !== 0;
const devOf = (e: CompactEntry) => e[2][STAT_INDEX.dev];
const inoOf = (e: CompactEntry) => e[2][STAT_INDEX.ino];

function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

/** d_type may be unknown on some filesystems; such a name might be a directory. */
function mayBeDirectory(d: Dirent): boolean {
  return (
    d.isDirectory() ||
    !(d.isFile() || d.isSymbolicLink() || d.isBlockDevice() || d.isCharacterDevice() || d.isFIFO() || d.isSocket())
  );
}

/** One directory waiting in the breadth-first queue. */
interface PendingDir {
  real: string;
  shown: string;
  /** level of this directory (fs_path is 0); its children are at level + 1 */
  level: number;
  /** resolves to the directory's own entry once lstat'ed; null for fs_path itself */
  entry: Promise<CompactEntry | null> | null;
}

/** A directory whose names are being lstat'ed; its children are filled in when all are done. */
interface Listing {
  /** the entry to fill (null: the top level, `files`) */
  entry: CompactEntry | null;
  slots: (CompactEntry | null)[];
  left: number;
  /** the directory is on a local filesystem: its names are lstat'ed synchronously, in batches */
  sync: boolean;
}

interface LstatJob {
  real: string;
  /** the directory's shown path (shared by its jobs; the entry's is built only for an error) */
  dirShown: string;
  name: string;
  listing: Listing;
  index: number;
  /** set for names that may be directories: the walk waits for their entry */
  done?: (e: CompactEntry | null) => void;
}

interface WalkRoot {
  real: string;
  shown: string;
  dev: number;
  ino: number;
}

/** Resolve and check the requested directory: 404 missing, 403 outside the roots, 400 not a directory. */
async function openRoot(requested: string, roots: readonly string[]): Promise<WalkRoot> {
  const shown = requested.length > 1 ? posix.normalize(requested).replace(/\/+$/, '') || '/' : requested;
  let real: string;
  try {
    real = await realpath(shown);
  } catch (e) {
    const code = errnoOf(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SystemRefusal('not_found', `${shown} does not exist`);
    if (code === 'EACCES') throw new SystemRefusal('forbidden', `${shown} cannot be read`);
    throw e;
  }
  if (!roots.some((r) => isInside(real, r))) {
    throw new SystemRefusal(
      'forbidden',
      `${shown} is outside the directories explore may read (settings.fs.readRoots)`,
    );
  }
  const st = await stat(real);
  if (!st.isDirectory()) throw new SystemRefusal('bad_request', `${shown} is not a directory`);
  return { real, shown, dev: st.dev, ino: st.ino };
}

export async function exploreTree(req: ExploreOpPayload, o: ExploreOptions): Promise<ExploreOpResult> {
  const depth = req.depth ?? EXPLORE_DEFAULT_DEPTH;
  const maxEntries = req.maxEntries ?? Math.min(EXPLORE_DEFAULT_ENTRIES, o.maxEntriesCeiling);
  const oneFileSystem = req.oneFileSystem ?? true;
  if (maxEntries > o.maxEntriesCeiling) {
    throw new SystemRefusal(
      'bad_request',
      `maxEntries ${maxEntries} is above this host's ceiling of ${o.maxEntriesCeiling} (settings.fs.exploreMaxEntries)`,
    );
  }
  const root = await openRoot(req.path, o.roots);
  return walks.run(() => walk(root, { depth, maxEntries, oneFileSystem }, o.localFsTypes ?? LOCAL_FS_TYPES));
}

async function walk(
  root: WalkRoot,
  limits: { depth: number; maxEntries: number; oneFileSystem: boolean },
  localFsTypes: ReadonlySet<number>,
): Promise<ExploreOpResult> {
  const files: CompactEntry[] = [];
  const reasons = new Set<TruncationReason>();
  const errors: ExploreOpResult['errors'] = [];
  let taken = 0; // names accepted against the cap
  let total = 0; // entries that made it (a name can vanish before its lstat)

  const truncate = (entry: CompactEntry | null, reason: TruncationReason) => {
    reasons.add(reason);
    if (entry) entry[1] |= FLAG.truncated;
  };
  const fail = (path: string, e: unknown) => {
    if (errors.length < MAX_EXPLORE_ERRORS)
      errors.push({ path, message: errnoOf(e) ?? String((e as Error)?.message ?? e) });
  };

  // ---- lstat pool: LSTAT_CONCURRENCY callback-style calls pulling from one job list. The
  // callback API costs far less per call than a promise chain, which matters at 100k entries.
  const jobs: LstatJob[] = [];
  let nextJob = 0;
  let active = 0;
  let allSettled: (() => void) | null = null;
  /** device → on a local filesystem (LOCAL_FS_TYPES), asked once per device */
  const localDevs = new Map<number, boolean>();
  const finish = (listing: Listing) => {
    const target = listing.entry ? listing.entry[3] : files;
    for (const c of listing.slots) if (c) target.push(c);
  };
  const settle = (job: LstatJob, err: NodeJS.ErrnoException | null, st: Stats | undefined) => {
    let entry: CompactEntry | null = null;
    if (err || !st) {
      // removed between readdir and lstat: it simply is not there any more
      if (err?.code !== 'ENOENT') fail(join(job.dirShown, job.name), err);
    } else {
      entry = toEntry(st, job.name);
      total++;
    }
    job.listing.slots[job.index] = entry;
    if (--job.listing.left === 0) finish(job.listing);
    job.done?.(entry);
  };
  let yielded = false; // a setImmediate(pump) is pending
  const pump = () => {
    let budget = SYNC_LSTAT_BATCH;
    while (nextJob < jobs.length) {
      const job = jobs[nextJob];
      if (job.listing.sync) {
        if (budget-- === 0) {
          // let the host breathe between batches (other requests, the socket of this one)
          if (!yielded) {
            yielded = true;
            setImmediate(() => {
              yielded = false;
              pump();
            });
          }
          return;
        }
        jobs[nextJob++] = undefined as unknown as LstatJob;
        let st: Stats | undefined;
        let err: NodeJS.ErrnoException | null = null;
        try {
          st = lstatSync(job.real);
        } catch (e) {
          err = e as NodeJS.ErrnoException;
        }
        settle(job, err, st);
        continue;
      }
      if (active >= LSTAT_CONCURRENCY) return;
      jobs[nextJob++] = undefined as unknown as LstatJob; // done with it: let it be collected
      active++;
      lstatCb(job.real, (err, st) => {
        active--;
        settle(job, err, st);
        pump();
      });
    }
    if (active === 0 && nextJob === jobs.length) allSettled?.();
  };

  // ---- breadth-first over directories: a queue with a moving head (shift() is O(n))
  const queue: PendingDir[] = [{ real: root.real, shown: root.shown, level: 0, entry: null }];
  for (let head = 0; head < queue.length; head++) {
    const dir = queue[head];
    queue[head] = undefined as unknown as PendingDir;
    const entry = dir.entry ? await dir.entry : null;
    if (dir.entry) {
      // a name that looked like a directory but is not one (or vanished) has nothing to read
      if (!entry || !isDir(entry)) continue;
      if (taken >= limits.maxEntries) {
        truncate(entry, 'entries');
        continue;
      }
      if (limits.oneFileSystem && devOf(entry) !== root.dev) {
        truncate(entry, 'device');
        continue;
      }
    }

    // a local filesystem (LOCAL_FS_TYPES) is read and lstat'ed synchronously, in batches
    const dev = entry ? devOf(entry) : root.dev;
    let sync = localDevs.get(dev);
    if (sync === undefined) {
      sync = await statfs(dir.real).then(
        (f) => localFsTypes.has(Number(f.type)),
        () => false,
      );
      localDevs.set(dev, sync);
    }

    const names: { name: string; maybeDir: boolean }[] = [];
    /** one name read: false once the cap is reached */
    const take = (d: Dirent): boolean => {
      if (taken >= limits.maxEntries) {
        truncate(entry, 'entries');
        return false;
      }
      taken++;
      names.push({ name: d.name, maybeDir: mayBeDirectory(d) });
      return true;
    };
    try {
      let now: Stats;
      if (sync) {
        const handle = opendirSync(dir.real, { bufferSize: DIR_BUFFER });
        try {
          for (let d = handle.readSync(), n = 1; d !== null && take(d); d = handle.readSync(), n++) {
            if (n % SYNC_LSTAT_BATCH === 0) await new Promise<void>((r) => setImmediate(r));
          }
        } finally {
          handle.closeSync();
        }
        now = lstatSync(dir.real);
      } else {
        const handle = await opendir(dir.real, { bufferSize: DIR_BUFFER });
        try {
          for (let d = await handle.read(); d !== null && take(d); d = await handle.read());
        } finally {
          await handle.close();
        }
        now = await lstat(dir.real);
      }
      // opendir follows symlinks: a directory swapped for a link (or another directory) since
      // its lstat must not bring names from outside the tree into the answer
      const was = entry ? { dev: devOf(entry), ino: inoOf(entry) } : root;
      if (!now.isDirectory() || now.dev !== was.dev || now.ino !== was.ino) {
        taken -= names.length;
        names.length = 0;
        throw Object.assign(new Error('changed during the walk'), { code: 'ECHANGED' });
      }
    } catch (e) {
      if (!entry) throw new SystemRefusal('forbidden', `${dir.shown} cannot be read: ${errnoOf(e) ?? String(e)}`);
      fail(dir.shown, e);
      truncate(entry, 'unreadable');
      continue;
    }
    if (names.length === 0) continue;
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

    const listing: Listing = {
      sync,
      entry,
      slots: new Array<CompactEntry | null>(names.length).fill(null),
      left: names.length,
    };
    const childLevel = dir.level + 1;
    names.forEach(({ name, maybeDir }, index) => {
      const real = join(dir.real, name);
      const job: LstatJob = { real, dirShown: dir.shown, name, listing, index };
      if (maybeDir) {
        if (childLevel < limits.depth) {
          const ready = new Promise<CompactEntry | null>((resolve) => (job.done = resolve));
          queue.push({ real, shown: join(dir.shown, name), level: childLevel, entry: ready });
        } else {
          job.done = (c) => void (c && isDir(c) && truncate(c, 'depth'));
        }
      }
      jobs.push(job);
    });
    pump();
  }
  if (active > 0 || nextJob < jobs.length) await new Promise<void>((resolve) => (allSettled = resolve));

  return {
    path: root.shown,
    entries: files,
    total,
    truncated: reasons.size > 0,
    truncatedBy: [...reasons].sort(),
    limits,
    errors,
  };
}
