/**
 * The streamed walk of POST /fs/explore (see explore.ts for when it is used): depth-first, each
 * directory's entries emitted as records (handlers/fs/explore.ts ExploreRecords) in the order
 * of the answer, handed to the route through a bounded queue (explore-handoff.ts) while the walk
 * goes on. The host holds the open directories' listings and a bounded number of records,
 * whatever the size of the tree; the JSON is written from the records as they come
 * (explore-json.ts).
 *
 * The answer is the breadth-first walk's, byte for byte, when the entry cap does not cut the
 * tree, which capWouldCut() decides first. Should the tree grow between that count and the walk
 * past the cap, the cap still holds: the walk stops taking names and marks the directory
 * `truncated` (which entries it keeps is then walk order, not breadth-first).
 */
import { lstat } from 'node:fs/promises';
import {
  FLAG,
  flagsOfMode,
  STAT_INDEX,
  STAT_STRIDE,
  type ExploreRecords,
  type ExploreStream,
  type TruncationReason,
} from '../../../handlers/fs/contract';
import { SystemRefusal } from '../../system/types';
import {
  byName,
  errnoOf,
  ErrorList,
  join,
  LSTAT_CONCURRENCY,
  lstatAsync,
  READ_AHEAD,
  readNames,
  stillTheDirectory,
  statNumbers,
  type LocalDevices,
  type ExploreLimits,
  type WalkRoot,
} from './explore-common';
import { Handoff, WalkLeft } from './explore-handoff';
import type { ExplorePool } from './explore-pool';

/** records handed over at once */
const RECORD_BATCH = 1024;

/**
 * A directory's entries, sorted by name, column by column like ExploreRecords (a worker's
 * numbers are kept as it sent them): entry i is `names[i]`, `flags[i]`, `stats[i * STAT_STRIDE ...]`.
 * The first `length` are walked (fewer than the names when the cap cut the directory).
 */
interface Kids {
  length: number;
  names: string[];
  flags: number[];
  stats: ArrayLike<number>;
}

/** A directory read and its names lstat'ed; `read` names counted against the cap. */
type Listed = { kids: Kids; read: number; cut: boolean } | { error: string };

/** Appends entry i's numbers of `from` to `into`. */
function pushStats(into: number[], from: ArrayLike<number>, i: number): void {
  for (let o = i * STAT_STRIDE; o < (i + 1) * STAT_STRIDE; o++) into.push(from[o]);
}

/** Kids from names and their numbers, without the entries whose lstat failed (`failed(i)`). */
function kidsOf(names: string[], stats: ArrayLike<number>, failed: ((i: number) => boolean) | null): Kids {
  if (failed === null) {
    const flags = names.map((_, i) => flagsOfMode(stats[i * STAT_STRIDE + STAT_INDEX.mode]));
    return { length: names.length, names, flags, stats };
  }
  const kept: Kids = { length: 0, names: [], flags: [], stats: [] };
  for (let i = 0; i < names.length; i++) {
    if (failed(i)) continue;
    kept.names.push(names[i]);
    kept.flags.push(flagsOfMode(stats[i * STAT_STRIDE + STAT_INDEX.mode]));
    pushStats(kept.stats as number[], stats, i);
    kept.length++;
  }
  return kept;
}

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
  const newBatch = (): ExploreRecords => ({ names: [], flags: [], stats: [], childCounts: [] });
  let out = newBatch();

  const truncate = (k: Kids, i: number, reason: TruncationReason) => {
    reasons.add(reason);
    k.flags[i] |= FLAG.truncated;
  };
  const emit = (k: Kids, i: number, childCount: number) => {
    out.names.push(k.names[i]);
    out.flags.push(k.flags[i]);
    pushStats(out.stats, k.stats, i);
    out.childCounts.push(childCount);
    total++;
  };
  const flush = async () => {
    if (out.names.length === 0) return;
    const batch = out;
    out = newBatch();
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
      const found = new Array<number[] | null>(names.length).fill(null);
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < names.length; i = next++) {
          const st = await lstatAsync(join(real, names[i].name));
          if (typeof st === 'string') lstatFailed(shown, names[i].name, st);
          else found[i] = statNumbers(st);
        }
      };
      await Promise.all(Array.from({ length: Math.min(LSTAT_CONCURRENCY, names.length) }, lane));
      const kept = names.filter((_, i) => found[i] !== null).map((n) => n.name);
      const kids = kidsOf(
        kept,
        found.flatMap((s) => s ?? []),
        null,
      );
      return { kids, read: names.length, cut };
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
    const codes = a.codes;
    codes?.forEach((code, i) => code !== null && lstatFailed(shown, a.names[i], code));
    const kids = kidsOf(a.names, a.stats, codes && ((i) => codes[i] !== null));
    return { kids, read: a.names.length, cut: a.cut };
  };

  /** listings started ahead of the walk, by real path */
  const ahead = new Map<string, Promise<Listed>>();
  const isDir = (k: Kids, i: number) => (k.flags[i] & FLAG.directory) !== 0;
  const devOf = (k: Kids, i: number) => k.stats[i * STAT_STRIDE + STAT_INDEX.dev];
  const idOf = (k: Kids, i: number) => ({ dev: devOf(k, i), ino: k.stats[i * STAT_STRIDE + STAT_INDEX.ino] });
  const enters = (k: Kids, i: number, level: number) =>
    isDir(k, i) && level < limits.depth && !(limits.oneFileSystem && devOf(k, i) !== root.dev);

  /** Emits a listed directory's entries, each directory's own entries after it (depth-first). */
  const walkKids = async (kids: Kids, level: number, dirReal: string, dirShown: string): Promise<void> => {
    let next = 0; // kids[next...] have not been considered for reading ahead
    const readAhead = () => {
      for (; next < kids.length && ahead.size < READ_AHEAD; next++) {
        if (!enters(kids, next, level)) continue;
        const name = kids.names[next];
        const real = join(dirReal, name);
        ahead.set(real, list(real, join(dirShown, name), idOf(kids, next)));
      }
    };
    readAhead();
    for (let i = 0; i < kids.length; i++) {
      if (out.names.length >= RECORD_BATCH) await flush();
      if (!isDir(kids, i)) {
        emit(kids, i, 0);
        continue;
      }
      // no check of the cap here: in this order it may be all taken before an empty directory
      // that the breadth-first walk reached earlier; a name over it is what cuts (below)
      if (level >= limits.depth) truncate(kids, i, 'depth');
      else if (limits.oneFileSystem && devOf(kids, i) !== root.dev) truncate(kids, i, 'device');
      if (kids.flags[i] & FLAG.truncated) {
        emit(kids, i, 0);
        continue;
      }
      const real = join(dirReal, kids.names[i]);
      const shown = join(dirShown, kids.names[i]);
      const pending = ahead.get(real) ?? list(real, shown, idOf(kids, i));
      ahead.delete(real);
      readAhead();
      await flush(); // the route writes what is ready while this directory is read
      const listed = await pending;
      if ('error' in listed) {
        errors.add(shown, listed.error);
        truncate(kids, i, 'unreadable');
        emit(kids, i, 0);
        continue;
      }
      // read ahead with the cap as it was then: should the tree have grown past it since the
      // count, keep what is left of it (in name order)
      const left = limits.maxEntries - taken;
      const inner = listed.kids;
      if (listed.cut || listed.read > left) {
        truncate(kids, i, 'entries');
        inner.length = Math.min(inner.length, left);
      }
      taken += Math.min(listed.read, left);
      emit(kids, i, inner.length);
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
