/**
 * explore's breadth-first walk (used when the entry cap cuts the tree; see explore.ts): reads
 * directories level by level, stops taking names at the cap, and builds the whole compact tree,
 * so which entries the cap keeps is the shallowest ones.
 */
import type { Dirent, Stats } from 'node:fs';
import { lstat as lstatCb, lstatSync, opendirSync } from 'node:fs';
import { setImmediate as aTurn } from 'node:timers/promises';
import { lstat, opendir } from 'node:fs/promises';
import {
  FLAG,
  STAT_STRIDE,
  type CompactEntry,
  type ExploreOpResult,
  type TruncationReason,
} from '../../../handlers/fs/contract';
import { SystemRefusal } from '../../system/types';
import {
  byName,
  devOf,
  DIR_BUFFER,
  entryOf,
  errnoOf,
  ErrorList,
  inoOf,
  isDir,
  join,
  LocalDevices,
  LSTAT_CONCURRENCY,
  mayBeDirectory,
  POOL_BATCH,
  stillTheDirectory,
  SYNC_READ_BATCH,
  toEntry,
  type ExploreLimits,
  type Name,
  type WalkRoot,
} from './explore-common';
import { ExplorePool, type StatsAnswer } from './explore-pool';

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
  /** the directory is on a local filesystem: its names are lstat'ed in batches on the worker pool */
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
  /** lstat this one on the async path (its pool batch failed) */
  async?: boolean;
}

export async function walkBreadthFirst(
  root: WalkRoot,
  limits: ExploreLimits,
  local: LocalDevices,
  pool: ExplorePool,
): Promise<ExploreOpResult> {
  const files: CompactEntry[] = [];
  const reasons = new Set<TruncationReason>();
  const errors = new ErrorList();
  let taken = 0; // names accepted against the cap
  let total = 0; // entries that made it (a name can vanish before its lstat)

  const truncate = (entry: CompactEntry | null, reason: TruncationReason) => {
    reasons.add(reason);
    if (entry) entry[1] |= FLAG.truncated;
  };
  const fail = (path: string, message: string) => errors.add(path, message);

  // ---- lstat: local filesystems in batches on the worker pool (explore-pool.ts); anything else,
  // and a batch whose worker died, through LSTAT_CONCURRENCY callback-style calls on libuv's
  // pool (the callback API costs far less per call than a promise chain, at 100k entries).
  const jobs: LstatJob[] = [];
  let nextJob = 0;
  let active = 0; // async calls and pool batches in flight
  let allSettled: (() => void) | null = null;
  const finish = (listing: Listing) => {
    const target = listing.entry ? listing.entry[3] : files;
    for (const c of listing.slots) if (c) target.push(c);
  };
  const place = (job: LstatJob, entry: CompactEntry | null, failure: string | null) => {
    // a name removed between readdir and lstat simply is not there any more
    if (failure !== null && failure !== 'ENOENT') fail(join(job.dirShown, job.name), failure);
    if (entry) total++;
    job.listing.slots[job.index] = entry;
    if (--job.listing.left === 0) finish(job.listing);
    job.done?.(entry);
  };
  const settleBatch = (batch: LstatJob[], b: StatsAnswer) => {
    for (let i = 0; i < batch.length; i++) {
      const code = b.codes?.[i] ?? null;
      place(batch[i], code === null ? entryOf(b.stats, i * STAT_STRIDE, batch[i].name) : null, code);
    }
  };
  const pump = () => {
    while (nextJob < jobs.length) {
      const job = jobs[nextJob];
      if (job.listing.sync && !job.async) {
        if (!pool.hasRoom()) {
          // whoever's task frees the room (this walk's, another walk's, a count's read-ahead)
          pool.whenRoom(pump);
          return;
        }
        const batch: LstatJob[] = [];
        for (; batch.length < POOL_BATCH && nextJob < jobs.length; nextJob++) {
          const j = jobs[nextJob];
          if (!j.listing.sync || j.async) break;
          batch.push(j);
          jobs[nextJob] = undefined as unknown as LstatJob; // done with it: let it be collected
        }
        active++;
        const viaLibuv = () => {
          // the worker died: these names go through the async path instead
          active--;
          for (const j of batch) jobs.push(Object.assign(j, { async: true }));
          pump();
        };
        pool.run({ kind: 'lstat', paths: batch.map((j) => j.real) }).then((b) => {
          if (b.kind !== 'lstat') return viaLibuv();
          active--;
          settleBatch(batch, b);
          pump();
        }, viaLibuv);
        continue;
      }
      if (active >= LSTAT_CONCURRENCY) return;
      jobs[nextJob++] = undefined as unknown as LstatJob;
      active++;
      lstatCb(job.real, (err, st) => {
        active--;
        if (err || !st) place(job, null, errnoOf(err) ?? String(err?.message ?? err));
        else place(job, toEntry(st, job.name), null);
        pump();
      });
    }
    if (active === 0 && nextJob === jobs.length) allSettled?.();
  };
  /** names read since the walk last let the event loop run */
  let sinceYield = 0;

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
    const sync = await local.isLocal(dev, dir.real);

    const names: Name[] = [];
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
          for (let d = handle.readSync(); d !== null && take(d); d = handle.readSync()) {
            if (++sinceYield === SYNC_READ_BATCH) {
              // let the host breathe (other requests, the pool's answers)
              sinceYield = 0;
              await aTurn();
            }
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
      if (!stillTheDirectory(now, entry ? { dev: devOf(entry), ino: inoOf(entry) } : root)) {
        taken -= names.length;
        names.length = 0;
        throw Object.assign(new Error('changed during the walk'), { code: 'ECHANGED' });
      }
    } catch (e) {
      if (!entry) throw new SystemRefusal('forbidden', `${dir.shown} cannot be read: ${errnoOf(e) ?? String(e)}`);
      fail(dir.shown, errnoOf(e) ?? String((e as Error)?.message ?? e));
      truncate(entry, 'unreadable');
      continue;
    }
    if (names.length === 0) continue;
    names.sort(byName);

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
    errors: errors.list(),
  };
}
