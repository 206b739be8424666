/**
 * Would the breadth-first walk's entry cap cut this tree? explore.ts asks before it streams
 * (explore-dfs.ts): the streamed walk gives the breadth-first answer's bytes only when it does not.
 */
import { SystemRefusal } from '../../system/types';
import {
  byName,
  errnoOf,
  join,
  lstatAsync,
  readNames,
  READ_AHEAD,
  type LocalDevices,
  type Name,
  type ExploreLimits,
  type WalkRoot,
} from './explore-common';
import type { ExplorePool } from './explore-pool';

/** `count` names read (at most limit + 1) and, sorted, those that are directories: what the count needs */
type Scan = { count: number; dirs: [name: string, dev: number][] } | { error: string };

/** scan on the event loop, through libuv (any filesystem; the workers' is for local ones) */
async function scanHere(real: string, limit: number, wantDirs: boolean): Promise<Scan> {
  let names: Name[];
  try {
    names = await readNames(real, limit);
  } catch (e) {
    return { error: errnoOf(e) ?? String(e) };
  }
  const dirs: [string, number][] = [];
  if (wantDirs) {
    for (const n of names.filter((x) => x.maybeDir).sort(byName)) {
      const st = await lstatAsync(join(real, n.name));
      if (typeof st !== 'string' && st.isDirectory()) dirs.push([n.name, st.dev]);
    }
  }
  return { count: names.length, dirs };
}

/**
 * Would the breadth-first walk's entry cap cut this tree? Counts names level by level as that
 * walk takes them (readdir, and lstat of the names that may be directories), a few directories
 * read ahead on the workers, and stops at the first name or directory the cap would refuse. A
 * directory that cannot be read counts nothing (the walk lists it as unreadable); the root's
 * refusal is the walk's.
 */
export async function capWouldCut(
  root: WalkRoot,
  limits: ExploreLimits,
  local: LocalDevices,
  pool: ExplorePool,
): Promise<boolean> {
  let taken = 0;
  const queue: { real: string; level: number; dev: number; scan?: Promise<Scan> }[] = [
    { real: root.real, level: 0, dev: root.dev },
  ];
  const entered = (i: number) => i === 0 || !limits.oneFileSystem || queue[i].dev === root.dev;
  const scanOf = async (i: number): Promise<Scan> => {
    const d = queue[i];
    const wantDirs = d.level + 1 < limits.depth;
    const limit = limits.maxEntries - taken; // taken only grows: never less than what is left then
    if (!(await local.isLocal(d.dev, d.real))) return scanHere(d.real, limit, wantDirs);
    const a = await pool.run({ kind: 'scan', dir: d.real, limit, dirs: wantDirs }).catch(() => null);
    if (a?.kind === 'scan') return a;
    if (a?.kind === 'error') return { error: a.code };
    return scanHere(d.real, limit, wantDirs); // the worker died
  };
  for (let head = 0; head < queue.length; head++) {
    for (let i = head; i < Math.min(queue.length, head + READ_AHEAD); i++)
      if (!queue[i].scan && entered(i)) queue[i].scan = scanOf(i);
    const dir = queue[head];
    if (head > 0 && taken >= limits.maxEntries) return true;
    if (!dir.scan) continue; // on another filesystem: listed, not entered
    const scan = await dir.scan;
    dir.scan = undefined;
    if ('error' in scan) {
      if (head === 0) throw new SystemRefusal('forbidden', `${root.shown} cannot be read: ${scan.error}`);
      continue;
    }
    if (scan.count > limits.maxEntries - taken) return true;
    taken += scan.count;
    for (const [name, dev] of scan.dirs) queue.push({ real: join(dir.real, name), level: dir.level + 1, dev });
  }
  return false;
}
