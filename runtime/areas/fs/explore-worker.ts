/**
 * The code of explore's worker threads (explore-pool.ts), for local filesystems: the system
 * calls of a walk (readdir, lstat) and nothing else, synchronously, off the event loop.
 *
 * exploreWorkerMain runs in the worker as the text of this function (`eval`), so it must be
 * self-contained: no imports, no names from this module, Node's modules through
 * process.getBuiltinModule (Node >= 20.16). That way the same code runs from the host bundle and
 * from the TypeScript sources under vitest, with no loader and no extra file to ship; a test
 * runs the bundle's copy (test/host/explore-bundle.test.ts).
 */

export type WorkerTask =
  /** lstat each path */
  | { kind: 'lstat'; paths: string[] }
  /**
   * A directory's names (at most `limit`, in readdir order; `cut` when there were more), checked
   * to still be the directory `dev`/`ino`, then sorted by name and lstat'ed
   */
  | {
      kind: 'list';
      dir: string;
      dev: number;
      ino: number;
      limit: number;
    }
  /**
   * How many names a directory has (up to limit + 1), and which of them (sorted) are directories,
   * with their device: explore's count of what the entry cap would take
   */
  | { kind: 'scan'; dir: string; limit: number; dirs: boolean };

/** `stats[i * STAT_STRIDE ...]` (handlers/fs/explore.ts) for entry i, or `codes[i]` (errno) if its lstat failed */
export interface StatsAnswer {
  stats: Float64Array;
  codes: (string | null)[] | null;
}
export type WorkerAnswer =
  | ({ kind: 'lstat' } & StatsAnswer)
  | ({
      kind: 'list';
      names: string[];
      cut: boolean;
    } & StatsAnswer)
  | { kind: 'scan'; count: number; dirs: [name: string, dev: number][] }
  /** the directory could not be read (errno, or ECHANGED: swapped during the walk) */
  | { kind: 'error'; code: string };

/** `stride` is STAT_STRIDE, passed in with the function's text (explore-pool.ts) */
export function exploreWorkerMain(stride: number): void {
  // not require() or import(): bundlers and vitest rewrite those into helpers the worker lacks
  const fs = process.getBuiltinModule('node:fs');
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  const codeOf = (e: unknown) => {
    const err = e as { code?: string; message?: string } | null;
    return err?.code || String(err?.message ?? e);
  };
  const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  /** d_type may be unknown on some filesystems; such a name might be a directory */
  const mayBeDir = (d: import('node:fs').Dirent) =>
    d.isDirectory() ||
    !(d.isFile() || d.isSymbolicLink() || d.isBlockDevice() || d.isCharacterDevice() || d.isFIFO() || d.isSocket());

  const lstatAll = (dir: string | null, names: string[]) => {
    const stats = new Float64Array(names.length * stride);
    let codes: (string | null)[] | null = null;
    for (let i = 0, o = 0; i < names.length; i++, o += stride) {
      let s: import('node:fs').Stats;
      try {
        s = fs.lstatSync(dir === null ? names[i] : join(dir, names[i]));
      } catch (e) {
        (codes ??= new Array<string | null>(names.length).fill(null))[i] = codeOf(e);
        continue;
      }
      stats[o] = s.dev;
      stats[o + 1] = s.mode;
      stats[o + 2] = s.nlink;
      stats[o + 3] = s.uid;
      stats[o + 4] = s.gid;
      stats[o + 5] = s.rdev;
      stats[o + 6] = s.blksize;
      stats[o + 7] = s.ino;
      stats[o + 8] = s.size;
      stats[o + 9] = s.blocks;
      stats[o + 10] = s.atimeMs;
      stats[o + 11] = s.mtimeMs;
      stats[o + 12] = s.ctimeMs;
      stats[o + 13] = s.birthtimeMs;
    }
    return { stats, codes };
  };

  /** up to limit + 1 names in readdir order, with whether each may be a directory */
  const read = (dir: string, limit: number) => {
    const names: string[] = [];
    const maybe: boolean[] = [];
    const handle = fs.opendirSync(dir, { bufferSize: 256 });
    try {
      for (let d = handle.readSync(); d !== null && names.length <= limit; d = handle.readSync()) {
        names.push(d.name);
        maybe.push(mayBeDir(d));
      }
    } finally {
      handle.closeSync();
    }
    return { names, maybe };
  };

  const answer = (t: WorkerTask): { value: WorkerAnswer; transfer: ArrayBuffer[] } => {
    try {
      if (t.kind === 'lstat') {
        const r = lstatAll(null, t.paths);
        return { value: { kind: 'lstat', ...r }, transfer: [r.stats.buffer as ArrayBuffer] };
      }
      if (t.kind === 'list') {
        const { names } = read(t.dir, t.limit);
        const cut = names.length > t.limit;
        if (cut) names.length = t.limit;
        // opendir follows symlinks: a directory swapped for a link (or another directory) since
        // its lstat must not bring names from outside the tree into the answer
        const now = fs.lstatSync(t.dir);
        if (!now.isDirectory() || now.dev !== t.dev || now.ino !== t.ino)
          return { value: { kind: 'error', code: 'ECHANGED' }, transfer: [] };
        names.sort(byName);
        const r = lstatAll(t.dir, names);
        return { value: { kind: 'list', names, cut, ...r }, transfer: [r.stats.buffer as ArrayBuffer] };
      }
      const { names, maybe } = read(t.dir, t.limit);
      const dirs: [string, number][] = [];
      if (t.dirs) {
        const candidates = names.filter((_, i) => maybe[i]).sort(byName);
        for (const name of candidates) {
          const s = fs.lstatSync(join(t.dir, name), { throwIfNoEntry: false });
          if (s?.isDirectory()) dirs.push([name, s.dev]);
        }
      }
      return { value: { kind: 'scan', count: names.length, dirs }, transfer: [] };
    } catch (e) {
      return { value: { kind: 'error', code: codeOf(e) }, transfer: [] };
    }
  };

  parentPort!.on('message', ({ id, task }: { id: number; task: WorkerTask }) => {
    const { value, transfer } = answer(task);
    parentPort!.postMessage({ id, value }, transfer);
  });
}
