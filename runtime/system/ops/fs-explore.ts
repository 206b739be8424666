/**
 * Host side of POST /fs/explore: a read-only, bounded walk of a directory tree.
 *
 * How it stays cheap on a large tree:
 * - directories are read in breadth-first order with opendir (streamed in small buffers), so
 *   a directory with millions of names costs only as many as the entry cap still allows;
 * - every entry is lstat'ed exactly once, through a concurrency limit (LSTAT_CONCURRENCY
 *   calls in flight), while the walk goes on reading the next directories;
 * - the walk stops taking names at `maxEntries` and does not enter directories deeper than
 *   `depth`, or (by default) on another filesystem: memory is O(entries returned);
 * - at most EXPLORE_CONCURRENCY walks run at once; more wait in a short queue, then 503.
 *
 * Safety: lstat only, so a symbolic link is an entry and never a way out of the tree; only
 * the requested path itself is resolved (like `find -H`), and its real path must lie inside one
 * of the configured read roots. Nothing is opened for writing, nothing is changed.
 *
 * Order: each directory's children are sorted by name (JS string order), so answers are
 * stable. Which names of a directory are kept when the cap cuts it is readdir's order.
 */
import type { Dirent, Stats } from 'node:fs';
import { lstat as lstatCb } from 'node:fs';
import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import {
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  MAX_EXPLORE_ERRORS,
  type ExploreEntry,
  type ExploreOpPayload,
  type ExploreResult,
  type TruncationReason,
} from '../../../handlers/fs/explore';
import { Semaphore } from '../semaphore';
import { SystemRefusal } from '../types';

/** lstat calls in flight (libuv's pool has 4 threads; 32 keeps them busy) */
const LSTAT_CONCURRENCY = 32;
/** whole walks at once, and how many may wait: each holds up to maxEntries entries in memory */
const EXPLORE_CONCURRENCY = 2;
const EXPLORE_QUEUE = 4;
/** names per readdir call under opendir (Node's default is 32) */
const DIR_BUFFER = 256;

export interface ExploreOptions {
  /** real paths (already resolved) that requests may explore below */
  roots: readonly string[];
  /** the largest maxEntries a request may ask for */
  maxEntriesCeiling: number;
}

const walks = new Semaphore(EXPLORE_CONCURRENCY, EXPLORE_QUEUE);

/** `/a/b` is inside `/a` and `/`; `/ab` is not inside `/a`. */
export function isInside(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/**
 * ISO text of a timestamp. A fresh file has atime = mtime = ctime = birthtime, so the last
 * answer is kept: it saves most of the four conversions per entry on bulk-written trees.
 */
let lastMs = Number.NaN;
let lastIso = '';
function iso(ms: number): string {
  if (ms === lastMs) return lastIso;
  const d = new Date(ms);
  // a timestamp outside Date's range (corrupt inode) must not fail the whole walk
  lastIso = Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString();
  lastMs = ms;
  return lastIso;
}

function toEntry(s: Stats, name: string, path: string): ExploreEntry {
  return {
    dev: s.dev,
    mode: s.mode,
    nlink: s.nlink,
    uid: s.uid,
    gid: s.gid,
    rdev: s.rdev,
    blksize: s.blksize,
    ino: s.ino,
    size: s.size,
    blocks: s.blocks,
    atimeMs: s.atimeMs,
    mtimeMs: s.mtimeMs,
    ctimeMs: s.ctimeMs,
    birthtimeMs: s.birthtimeMs,
    atime: iso(s.atimeMs),
    mtime: iso(s.mtimeMs),
    ctime: iso(s.ctimeMs),
    birthtime: iso(s.birthtimeMs),
    name,
    path,
    isSymbolicLink: s.isSymbolicLink(),
    isBlockDevice: s.isBlockDevice(),
    isDirectory: s.isDirectory(),
    isFile: s.isFile(),
    children: [],
    file_num: 0,
  };
}

function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

/** d_type may be unknown on some filesystems; such a name might be a directory. */
function mayBeDirectory(d: Dirent): boolean {
  return d.isDirectory() || !(d.isFile() || d.isSymbolicLink() || d.isBlockDevice() || d.isCharacterDevice() || d.isFIFO() || d.isSocket());
}

/** One directory waiting in the breadth-first queue. */
interface PendingDir {
  real: string;
  shown: string;
  /** level of this directory (fs_path is 0); its children are at level + 1 */
  level: number;
  /** resolves to the directory's own entry once lstat'ed; null for fs_path itself */
  entry: Promise<ExploreEntry | null> | null;
}

/** A directory whose names are being lstat'ed; its children are filled in when all are done. */
interface Listing {
  /** the entry to fill (null: the top level, `files`) */
  entry: ExploreEntry | null;
  slots: (ExploreEntry | null)[];
  left: number;
}

interface LstatJob {
  real: string;
  shown: string;
  name: string;
  listing: Listing;
  index: number;
  /** set for names that may be directories: the walk waits for their entry */
  done?: (e: ExploreEntry | null) => void;
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
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SystemRefusal(404, 'not_found', `${shown} does not exist`);
    if (code === 'EACCES') throw new SystemRefusal(403, 'forbidden', `${shown} cannot be read`);
    throw e;
  }
  if (!roots.some((r) => isInside(real, r))) {
    throw new SystemRefusal(403, 'forbidden', `${shown} is outside the directories explore may read (settings.fs.readRoots)`);
  }
  const st = await stat(real);
  if (!st.isDirectory()) throw new SystemRefusal(400, 'bad_request', `${shown} is not a directory`);
  return { real, shown, dev: st.dev, ino: st.ino };
}

export async function exploreTree(req: ExploreOpPayload, o: ExploreOptions): Promise<ExploreResult> {
  const depth = req.depth ?? EXPLORE_DEFAULT_DEPTH;
  const maxEntries = req.maxEntries ?? Math.min(EXPLORE_DEFAULT_ENTRIES, o.maxEntriesCeiling);
  const oneFileSystem = req.oneFileSystem ?? true;
  if (maxEntries > o.maxEntriesCeiling) {
    throw new SystemRefusal(400, 'bad_request', `maxEntries ${maxEntries} is above this host's ceiling of ${o.maxEntriesCeiling} (settings.fs.exploreMaxEntries)`);
  }
  const root = await openRoot(req.path, o.roots);
  return walks.run(() => walk(root, { depth, maxEntries, oneFileSystem }));
}

async function walk(
  root: WalkRoot,
  limits: { depth: number; maxEntries: number; oneFileSystem: boolean },
): Promise<ExploreResult> {
  const files: ExploreEntry[] = [];
  const reasons = new Set<TruncationReason>();
  const errors: ExploreResult['errors'] = [];
  let taken = 0; // names accepted against the cap
  let total = 0; // entries that made it (a name can vanish before its lstat)

  const truncate = (entry: ExploreEntry | null, reason: TruncationReason) => {
    reasons.add(reason);
    if (entry) entry.truncated = true;
  };
  const fail = (path: string, e: unknown) => {
    if (errors.length < MAX_EXPLORE_ERRORS) errors.push({ path, message: errnoOf(e) ?? String((e as Error)?.message ?? e) });
  };

  // ---- lstat pool: LSTAT_CONCURRENCY callback-style calls pulling from one job list. The
  // callback API costs far less per call than a promise chain, which matters at 100k entries.
  const jobs: LstatJob[] = [];
  let nextJob = 0;
  let active = 0;
  let allSettled: (() => void) | null = null;
  const finish = (listing: Listing) => {
    const target = listing.entry ? listing.entry.children : files;
    for (const c of listing.slots) if (c) target.push(c);
    if (listing.entry) listing.entry.file_num = listing.entry.children.length;
  };
  const pump = () => {
    while (active < LSTAT_CONCURRENCY && nextJob < jobs.length) {
      const job = jobs[nextJob];
      jobs[nextJob++] = undefined as unknown as LstatJob; // done with it: let it be collected
      active++;
      lstatCb(job.real, (err, st) => {
        active--;
        let entry: ExploreEntry | null = null;
        if (err) {
          // removed between readdir and lstat: it simply is not there any more
          if (err.code !== 'ENOENT') fail(job.shown, err);
        } else {
          entry = toEntry(st, job.name, job.shown);
          total++;
        }
        job.listing.slots[job.index] = entry;
        if (--job.listing.left === 0) finish(job.listing);
        job.done?.(entry);
        pump();
        if (active === 0 && nextJob === jobs.length) allSettled?.();
      });
    }
  };

  // ---- breadth-first over directories: a queue with a moving head (shift() is O(n))
  const queue: PendingDir[] = [{ real: root.real, shown: root.shown, level: 0, entry: null }];
  for (let head = 0; head < queue.length; head++) {
    const dir = queue[head];
    queue[head] = undefined as unknown as PendingDir;
    const entry = dir.entry ? await dir.entry : null;
    if (dir.entry) {
      // a name that looked like a directory but is not one (or vanished) has nothing to read
      if (!entry || !entry.isDirectory) continue;
      if (taken >= limits.maxEntries) {
        truncate(entry, 'entries');
        continue;
      }
      if (limits.oneFileSystem && entry.dev !== root.dev) {
        truncate(entry, 'device');
        continue;
      }
    }

    const names: { name: string; maybeDir: boolean }[] = [];
    try {
      const handle = await opendir(dir.real, { bufferSize: DIR_BUFFER });
      try {
        for (let d = await handle.read(); d !== null; d = await handle.read()) {
          if (taken >= limits.maxEntries) {
            truncate(entry, 'entries');
            break;
          }
          taken++;
          names.push({ name: d.name, maybeDir: mayBeDirectory(d) });
        }
      } finally {
        await handle.close();
      }
      // opendir follows symlinks: a directory swapped for a link (or another directory) since
      // its lstat must not bring names from outside the tree into the answer
      const now = await lstat(dir.real);
      const was = entry ?? root;
      if (!now.isDirectory() || now.dev !== was.dev || now.ino !== was.ino) {
        taken -= names.length;
        names.length = 0;
        throw Object.assign(new Error('changed during the walk'), { code: 'ECHANGED' });
      }
    } catch (e) {
      if (!entry) throw new SystemRefusal(403, 'forbidden', `${dir.shown} cannot be read: ${errnoOf(e) ?? String(e)}`);
      fail(dir.shown, e);
      truncate(entry, 'unreadable');
      continue;
    }
    if (names.length === 0) continue;
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

    const listing: Listing = { entry, slots: new Array<ExploreEntry | null>(names.length).fill(null), left: names.length };
    const childLevel = dir.level + 1;
    names.forEach(({ name, maybeDir }, index) => {
      const real = dir.real === '/' ? `/${name}` : `${dir.real}/${name}`;
      const shown = dir.shown === '/' ? `/${name}` : `${dir.shown}/${name}`;
      const job: LstatJob = { real, shown, name, listing, index };
      if (maybeDir) {
        if (childLevel < limits.depth) {
          const ready = new Promise<ExploreEntry | null>((resolve) => (job.done = resolve));
          queue.push({ real, shown, level: childLevel, entry: ready });
        } else {
          job.done = (c) => void (c?.isDirectory && truncate(c, 'depth'));
        }
      }
      jobs.push(job);
    });
    pump();
  }
  if (active > 0 || nextJob < jobs.length) await new Promise<void>((resolve) => (allSettled = resolve));

  return {
    files,
    total,
    truncated: reasons.size > 0,
    truncatedBy: [...reasons].sort(),
    limits,
    errors,
  };
}
