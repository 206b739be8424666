/**
 * What explore's walks share (explore-bfs.ts breadth-first, explore-dfs.ts streamed, and the count
 * of explore-count.ts): the limits, the root's checks, how an entry is made from an lstat, which
 * filesystems are local, reading a directory through libuv, and the error list.
 */
import { lstat as lstatCb, type Dirent, type Stats } from 'node:fs';
import { opendir, realpath, stat, statfs } from 'node:fs/promises';
import { posix } from 'node:path';
import {
  FLAG,
  flagsOfMode,
  MAX_EXPLORE_ERRORS,
  STAT_INDEX,
  type CompactEntry,
  type ExploreOpResult,
  type ExploreAnswer,
} from '../../../handlers/fs/contract';
import { isUnder } from '../../system/confine';
import { SystemRefusal } from '../../system/types';

/** depth, maxEntries and oneFileSystem, defaults applied */
export type ExploreLimits = ExploreOpResult['limits'];

/** lstat calls in flight (libuv's pool has 4 threads; 32 keeps them busy) */
export const LSTAT_CONCURRENCY = 32;
/** names per readdir call under opendir (Node's default is 32) */
export const DIR_BUFFER = 256;
/**
 * Names read synchronously in one event-loop turn before the walk yields (setImmediate) to the
 * rest of the host: well under a millisecond on a local disk with a warm cache.
 */
export const SYNC_READ_BATCH = 256;
/** directories read ahead of a walk on the workers (the count's and the streamed walk's) */
export const READ_AHEAD = 16;
/** paths per lstat task on the worker pool (explore-pool.ts) */
export const POOL_BATCH = 256;
/**
 * Filesystems (statfs f_type) whose directories the walk reads synchronously and whose entries
 * it lstat's in batches on worker threads: local block or memory filesystems, where an lstat is
 * a few microseconds. One libuv round trip per entry cost 4-6x the lstat itself (measured:
 * 100 000 async lstats 2.1-2.7 s; on the event loop 0.45 s; on two workers 0.27 s, 2 cores).
 * Anything else (NFS, CIFS, FUSE, unknown) keeps libuv's async pool, so a hung network
 * filesystem holds up the walk but never the host's event loop or the workers.
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

/** An lstat's numbers in the order of STAT_FIELDS. */
export function statNumbers(s: Stats): number[] {
  return [
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
}

/** One entry in the compact form of handlers/fs/explore.ts (the route rebuilds the spec's object). */
export function toEntry(s: Stats, name: string): CompactEntry {
  return [name, flagsOfMode(s.mode), statNumbers(s), []];
}

/** One entry in the compact form, from a worker's numbers (STAT_FIELDS' order, at `o`). */
export function entryOf(st: Float64Array, o: number, name: string): CompactEntry {
  const stats = [
    st[o],
    st[o + 1],
    st[o + 2],
    st[o + 3],
    st[o + 4],
    st[o + 5],
    st[o + 6],
    st[o + 7],
    st[o + 8],
    st[o + 9],
    st[o + 10],
    st[o + 11],
    st[o + 12],
    st[o + 13],
  ];
  return [name, flagsOfMode(st[o + 1]), stats, []];
}

/** `/` + name, or dir + `/` + name (no normalisation: names are single components) */
export const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

export const isDir = (e: CompactEntry) => (e[1] & FLAG.directory) !== 0;
export const devOf = (e: CompactEntry) => e[2][STAT_INDEX.dev];
export const inoOf = (e: CompactEntry) => e[2][STAT_INDEX.ino];

/**
 * opendir follows symlinks: a directory swapped for a link (or another directory) since its
 * lstat (`was`) must not bring names from outside the tree into the answer. `now`: its lstat
 * after the read.
 */
export function stillTheDirectory(now: Stats, was: { dev: number; ino: number }): boolean {
  return now.isDirectory() && now.dev === was.dev && now.ino === was.ino;
}

export function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

/** d_type may be unknown on some filesystems; such a name might be a directory. */
export function mayBeDirectory(d: Dirent): boolean {
  return (
    d.isDirectory() ||
    !(d.isFile() || d.isSymbolicLink() || d.isBlockDevice() || d.isCharacterDevice() || d.isFIFO() || d.isSocket())
  );
}

export interface WalkRoot {
  real: string;
  shown: string;
  dev: number;
  ino: number;
}

/** Resolve and check the requested directory: 404 missing, 403 outside the roots, 400 not a directory. */
export async function openRoot(requested: string, roots: readonly string[]): Promise<WalkRoot> {
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
  if (!roots.some((r) => isUnder(real, r))) {
    throw new SystemRefusal(
      'forbidden',
      `${shown} is outside the directories explore may read (settings.fs.readRoots)`,
    );
  }
  const st = await stat(real);
  if (!st.isDirectory()) throw new SystemRefusal('bad_request', `${shown} is not a directory`);
  return { real, shown, dev: st.dev, ino: st.ino };
}

/** statfs types of the devices met so far: is each one local (LOCAL_FS_TYPES)? Asked once per device. */
export class LocalDevices {
  private readonly known = new Map<number, boolean>();
  constructor(private readonly types: ReadonlySet<number>) {}
  async isLocal(dev: number, somePath: string): Promise<boolean> {
    let local = this.known.get(dev);
    if (local === undefined) {
      local = await statfs(somePath).then(
        (f) => this.types.has(Number(f.type)),
        () => false,
      );
      this.known.set(dev, local);
    }
    return local;
  }

  /** isLocal's answer when the device was asked about before, else undefined (no statfs). */
  knownLocal(dev: number): boolean | undefined {
    return this.known.get(dev);
  }
}

/** Breadth-first order of paths: shallower first, then component by component (the walk's order). */
function bfsOrder(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/**
 * The answer's `errors`: the first MAX_EXPLORE_ERRORS in breadth-first order of their paths, the
 * same whichever order the walk met them in (the streamed walk meets them depth-first).
 */
export class ErrorList {
  private readonly kept: ExploreAnswer['errors'] = [];
  add(path: string, message: string): void {
    const k = this.kept;
    if (k.length === MAX_EXPLORE_ERRORS && bfsOrder(path, k[k.length - 1].path) >= 0) return;
    let at = k.length;
    while (at > 0 && bfsOrder(path, k[at - 1].path) < 0) at--;
    k.splice(at, 0, { path, message });
    if (k.length > MAX_EXPLORE_ERRORS) k.pop();
  }
  list(): ExploreAnswer['errors'] {
    return this.kept;
  }
}

export interface Name {
  name: string;
  maybeDir: boolean;
}

/** Up to `limit` + 1 names of a directory in readdir order (one more tells the caller there are more). */
export async function readNames(real: string, limit: number): Promise<Name[]> {
  const names: Name[] = [];
  const handle = await opendir(real, { bufferSize: DIR_BUFFER });
  try {
    for (let d = await handle.read(); d !== null && names.length <= limit; d = await handle.read())
      names.push({ name: d.name, maybeDir: mayBeDirectory(d) });
  } finally {
    await handle.close();
  }
  return names;
}

export const byName = (a: Name, b: Name) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** lstat, answering the Stats or the errno code */
export function lstatAsync(path: string): Promise<Stats | string> {
  return new Promise((resolve) =>
    lstatCb(path, (err, st) => resolve(err ? (errnoOf(err) ?? String(err.message)) : st)),
  );
}
