/**
 * The streamed walk of POST /fs/explore (see explore.ts for when it is used): depth-first, each
 * directory's entries emitted as records (handlers/fs/explore.ts ExploreRecord) in the order of
 * the answer, handed to the route through a bounded queue (Handoff) while the walk goes on. The
 * host holds the open directories' listings and at most QUEUED_RECORDS records, whatever the
 * size of the tree; the JSON is written from the records as they come (explore-json.ts).
 *
 * The answer is the breadth-first walk's, byte for byte, when the entry cap does not cut the
 * tree, which capWouldCut() decides first. Should the tree grow between that count and the walk
 * past the cap, the cap still holds: the walk stops taking names and marks the directory
 * `truncated` (which entries it keeps is then walk order, not breadth-first).
 */
import { lstat } from 'node:fs/promises';
import {
  FLAG,
  type CompactEntry,
  type ExploreRecord,
  type ExploreStream,
  type TruncationReason,
} from '../../../handlers/fs/contract';
import { SystemRefusal } from '../../system/types';
import {
  byName,
  devOf,
  entryOf,
  errnoOf,
  ErrorList,
  inoOf,
  isDir,
  join,
  LSTAT_CONCURRENCY,
  lstatAsync,
  READ_AHEAD,
  readNames,
  stillTheDirectory,
  toEntry,
  type LocalDevices,
  type ExploreLimits,
  type WalkRoot,
} from './explore-common';
import { STAT_STRIDE, type ExplorePool } from './explore-pool';

/** records waiting for the route before the walk waits for it */
const QUEUED_RECORDS = 16_384;
/** records handed over at once */
const RECORD_BATCH = 1024;
/** a reader that takes nothing for this long is gone: the walk stops and gives back its place */
const STALL_MS = 120_000;

/** The walk's records on their way to the route: bounded, and the route leaving stops the walk. */
class Handoff {
  private readonly batches: ExploreRecord[][] = [];
  private queued = 0;
  private ended = false;
  private failure: { error: unknown } | null = null;
  /** the reader left (or stalled): the walk stops at its next put */
  left = false;
  private wakeReader: (() => void) | null = null;
  private wakeWalker: (() => void) | null = null;

  async put(batch: ExploreRecord[]): Promise<void> {
    if (this.left) throw new WalkLeft();
    this.batches.push(batch);
    this.queued += batch.length;
    this.wakeReader?.();
    while (this.queued > QUEUED_RECORDS && !this.left) {
      const stalled = setTimeout(() => this.leave(), STALL_MS);
      await new Promise<void>((r) => (this.wakeWalker = r));
      clearTimeout(stalled);
    }
    if (this.left) throw new WalkLeft();
  }

  end(failure?: { error: unknown }): void {
    this.ended = true;
    this.failure = failure ?? null;
    this.wakeReader?.();
  }

  private leave(): void {
    this.left = true;
    this.batches.length = 0;
    this.wakeWalker?.();
  }

  async *read(): AsyncGenerator<ExploreRecord[], void, undefined> {
    try {
      for (;;) {
        const batch = this.batches.shift();
        if (batch) {
          this.queued -= batch.length;
          this.wakeWalker?.();
          yield batch;
        } else if (this.ended) {
          if (this.failure) throw this.failure.error;
          return;
        } else {
          await new Promise<void>((r) => (this.wakeReader = r));
          this.wakeReader = null;
        }
      }
    } finally {
      if (!this.ended) this.leave();
    }
  }
}

class WalkLeft extends Error {}

/** A directory read and its names lstat'ed: entries sorted by name; `read` names counted against the cap. */
type Listed = { kids: CompactEntry[]; read: number; cut: boolean } | { error: string };

/**
 * Lists the root (a refusal comes from here, before any record) and starts the walk; `release`
 * is called once the walk has ended, failed, or been left.
 */
export async function exploreStream(
  root: WalkRoot,
  limits: ExploreLimits,
  local: LocalDevices,
  pool: ExplorePool,
  release: () => void,
): Promise<ExploreStream> {
  const reasons = new Set<TruncationReason>();
  const errors = new ErrorList();
  const handoff = new Handoff();
  let taken = 0;
  let total = 0;
  let out: ExploreRecord[] = [];

  const truncate = (e: CompactEntry, reason: TruncationReason) => {
    reasons.add(reason);
    e[1] |= FLAG.truncated;
  };
  const emit = (e: CompactEntry, childCount: number) => {
    out.push([e[0], e[1], e[2], childCount]);
    total++;
  };
  const flush = async () => {
    if (out.length === 0) return;
    const batch = out;
    out = [];
    await handoff.put(batch);
  };
  const lstatFailed = (dirShown: string, name: string, code: string) => {
    // a name removed between readdir and lstat simply is not there any more
    if (code !== 'ENOENT') errors.add(join(dirShown, name), code);
  };

  /** on the event loop, through libuv: any filesystem (the workers' is for local ones) */
  const listHere = async (
    real: string,
    shown: string,
    was: { dev: number; ino: number },
    limit: number,
  ): Promise<Listed> => {
    try {
      const names = await readNames(real, limit);
      const cut = names.length > limit;
      if (cut) names.length = limit;
      if (!stillTheDirectory(await lstat(real), was)) return { error: 'ECHANGED' };
      names.sort(byName);
      const found: (CompactEntry | null)[] = new Array<CompactEntry | null>(names.length).fill(null);
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < names.length; i = next++) {
          const st = await lstatAsync(join(real, names[i].name));
          if (typeof st === 'string') lstatFailed(shown, names[i].name, st);
          else found[i] = toEntry(st, names[i].name);
        }
      };
      await Promise.all(Array.from({ length: Math.min(LSTAT_CONCURRENCY, names.length) }, lane));
      return { kids: found.filter((e): e is CompactEntry => e !== null), read: names.length, cut };
    } catch (e) {
      return { error: errnoOf(e) ?? String((e as Error)?.message ?? e) };
    }
  };

  const list = async (real: string, shown: string, was: { dev: number; ino: number }): Promise<Listed> => {
    const limit = limits.maxEntries - taken; // taken only grows: never less than what is left then
    if (!(await local.isLocal(was.dev, real))) return listHere(real, shown, was, limit);
    const a = await pool.run({ kind: 'list', dir: real, dev: was.dev, ino: was.ino, limit }).catch(() => null);
    if (a?.kind === 'error') return { error: a.code };
    if (a?.kind !== 'list') return listHere(real, shown, was, limit); // the worker died
    const kids: CompactEntry[] = [];
    for (let i = 0; i < a.names.length; i++) {
      const code = a.codes?.[i] ?? null;
      if (code === null) kids.push(entryOf(a.stats, i * STAT_STRIDE, a.names[i]));
      else lstatFailed(shown, a.names[i], code);
    }
    return { kids, read: a.names.length, cut: a.cut };
  };

  /** listings started ahead of the walk, by real path */
  const ahead = new Map<string, Promise<Listed>>();
  const enters = (kid: CompactEntry, level: number) =>
    isDir(kid) && level < limits.depth && !(limits.oneFileSystem && devOf(kid) !== root.dev);

  /** Emits a listed directory's entries, each directory's own entries after it (depth-first). */
  const walkKids = async (kids: CompactEntry[], level: number, dirReal: string, dirShown: string): Promise<void> => {
    let next = 0; // kids[next...] have not been considered for reading ahead
    const readAhead = () => {
      for (; next < kids.length && ahead.size < READ_AHEAD; next++) {
        const kid = kids[next];
        if (!enters(kid, level)) continue;
        const real = join(dirReal, kid[0]);
        ahead.set(real, list(real, join(dirShown, kid[0]), { dev: devOf(kid), ino: inoOf(kid) }));
      }
    };
    readAhead();
    for (const kid of kids) {
      if (out.length >= RECORD_BATCH) await flush();
      if (!isDir(kid)) {
        emit(kid, 0);
        continue;
      }
      // no check of the cap here: in this order it may be all taken before an empty directory
      // that the breadth-first walk reached earlier; a name over it is what cuts (below)
      if (level >= limits.depth) truncate(kid, 'depth');
      else if (limits.oneFileSystem && devOf(kid) !== root.dev) truncate(kid, 'device');
      if (kid[1] & FLAG.truncated) {
        emit(kid, 0);
        continue;
      }
      const real = join(dirReal, kid[0]);
      const shown = join(dirShown, kid[0]);
      const pending = ahead.get(real) ?? list(real, shown, { dev: devOf(kid), ino: inoOf(kid) });
      ahead.delete(real);
      readAhead();
      await flush(); // the route writes what is ready while this directory is read
      const listed = await pending;
      if ('error' in listed) {
        errors.add(shown, listed.error);
        truncate(kid, 'unreadable');
        emit(kid, 0);
        continue;
      }
      // read ahead with the cap as it was then: should the tree have grown past it since the
      // count, keep what is left of it (in name order)
      const left = limits.maxEntries - taken;
      let inner = listed.kids;
      if (listed.cut || listed.read > left) {
        truncate(kid, 'entries');
        inner = inner.slice(0, left);
      }
      taken += Math.min(listed.read, left);
      emit(kid, inner.length);
      await walkKids(inner, level + 1, real, shown);
    }
  };

  const top = await list(root.real, root.shown, root);
  if ('error' in top) {
    release();
    throw new SystemRefusal('forbidden', `${root.shown} cannot be read: ${top.error}`);
  }
  taken = top.read;
  if (top.cut) reasons.add('entries');
  void walkKids(top.kids, 1, root.real, root.shown)
    .then(flush)
    .then(
      () => handoff.end(),
      (error: unknown) => handoff.end(error instanceof WalkLeft ? undefined : { error }),
    )
    .finally(release);

  return {
    kind: 'explore-stream',
    path: root.shown,
    limits,
    records: () => handoff.read(),
    trailer: () => ({
      total,
      truncated: reasons.size > 0,
      truncatedBy: [...reasons].sort(),
      errors: errors.list(),
    }),
  };
}
