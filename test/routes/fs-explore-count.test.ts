/**
 * explore's count (runtime/areas/fs/explore-count.ts): whether the entry cap cuts a tree, with
 * the pool's worker and the event loop scanning directories at once, and the event loop's scan
 * itself (names up to the limit, the directories among them, a turn between batches).
 */
import { mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDevices, LOCAL_FS_TYPES, openRoot, SYNC_READ_BATCH } from '../../runtime/areas/fs/explore-common';
import { capWouldCut, scanOnLoop, type ScanBy } from '../../runtime/areas/fs/explore-count';
import { ExplorePool, type WorkerAnswer, type WorkerTask } from '../../runtime/areas/fs/explore-pool';
import { privateDir } from '../helpers/tmp';

const dir = privateDir('ballast-explore-count');
const top = join(dir, 'tree');
/** entries below `top`, every level; and its directories (top's included) */
let entries = 0;
const directories = [top];
const BIG = join(dir, 'big');
const BIG_NAMES = 2 * SYNC_READ_BATCH + 100;

beforeAll(() => {
  // 3 levels: 6 directories of 5 directories of 12 files, and a file and a link at the top
  mkdirSync(top);
  for (let a = 0; a < 6; a++) {
    const da = join(top, `a${a}`);
    mkdirSync(da);
    directories.push(da);
    entries++;
    for (let b = 0; b < 5; b++) {
      const db = join(da, `b${b}`);
      mkdirSync(db);
      directories.push(db);
      entries++;
      for (let f = 0; f < 12; f++) writeFileSync(join(db, `f${f}`), '');
      entries += 12;
    }
  }
  writeFileSync(join(top, 'file'), 'x');
  symlinkSync('a0', join(top, 'link-to-a0'));
  entries += 2;
  mkdirSync(BIG);
  for (let i = 0; i < BIG_NAMES - 3; i++) writeFileSync(join(BIG, `n${String(i).padStart(4, '0')}`), '');
  for (const d of ['z-dir', 'm-dir', 'c-dir']) mkdirSync(join(BIG, d));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const limits = (maxEntries: number, depth = 20) => ({ maxEntries, depth, oneFileSystem: true });

/** A pool that counts its scan tasks; `full`: it never has room (another walk holds it). */
class CountingPool extends ExplorePool {
  scans = 0;
  constructor(private readonly full = false) {
    super({ size: 1 });
  }
  override hasRoom(): boolean {
    return !this.full && super.hasRoom();
  }
  override run(task: WorkerTask): Promise<WorkerAnswer> {
    if (task.kind === 'scan') this.scans++;
    return super.run(task);
  }
}

async function count(maxEntries: number, pool: ExplorePool, depth?: number) {
  const root = await openRoot(top, [dir]);
  const by = new Map<string, ScanBy[]>();
  const cut = await capWouldCut(root, limits(maxEntries, depth), new LocalDevices(LOCAL_FS_TYPES), pool, (real, b) =>
    by.set(real, [...(by.get(real) ?? []), b]),
  );
  return { cut, by };
}

describe("explore's count", () => {
  it('the cap cuts exactly past the tree size, the worker and the event loop each scanning some directories, each once', async () => {
    const pool = new CountingPool();
    try {
      const exact = await count(entries, pool);
      expect(exact.cut).toBe(false);
      // every directory scanned, once, by one of the two; the root by the worker (the head's scan)
      expect([...exact.by.keys()].sort()).toEqual([...directories].sort());
      expect([...exact.by.values()].every((b) => b.length === 1)).toBe(true);
      expect(exact.by.get(top)).toEqual(['pool']);
      const byLoop = [...exact.by.values()].filter((b) => b[0] === 'loop').length;
      const byPool = [...exact.by.values()].filter((b) => b[0] === 'pool').length;
      expect(byLoop).toBeGreaterThan(0);
      expect(byPool).toBeGreaterThan(1);
      expect(byLoop + byPool).toBe(directories.length);
      expect(pool.scans).toBe(byPool); // the event loop's scans never went to the worker
      // the first window (a0-a5): the worker takes the head and what its room holds (one worker,
      // two tasks), the event loop the last; a task counts against the room as it is given
      expect(exact.by.get(join(top, 'a0'))).toEqual(['pool']);
      expect(exact.by.get(join(top, 'a1'))).toEqual(['pool']);
      expect(exact.by.get(join(top, 'a5'))).toEqual(['loop']);

      expect((await count(entries - 1, pool)).cut).toBe(true);
      expect((await count(entries + 1, pool)).cut).toBe(false);
      // depth 2: the third level is listed, not entered (its files not counted)
      const shallow = 6 * 5 + 6 + 2;
      expect((await count(shallow, pool, 2)).cut).toBe(false);
      expect((await count(shallow - 1, pool, 2)).cut).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('with no room in the pool the worker still scans each head, the event loop the rest, and the count is right', async () => {
    const pool = new CountingPool(true);
    try {
      const exact = await count(entries, pool);
      expect(exact.cut).toBe(false);
      expect([...exact.by.keys()].sort()).toEqual([...directories].sort());
      expect(exact.by.get(top)).toEqual(['pool']);
      expect((await count(entries - 1, pool)).cut).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('the event loop scans up to the limit and one more, and the directories among the names, sorted, with their device', async () => {
    const dev = statSync(BIG).dev;
    const all = await scanOnLoop(BIG, 1_000_000, true);
    expect(all).toEqual({
      count: BIG_NAMES,
      dirs: [
        ['c-dir', dev],
        ['m-dir', dev],
        ['z-dir', dev],
      ],
    });
    expect(await scanOnLoop(BIG, BIG_NAMES, false)).toEqual({ count: BIG_NAMES, dirs: [] });
    // one more than the limit tells the caller there are more, and no more is read
    expect(await scanOnLoop(BIG, 10, false)).toMatchObject({ count: 11 });
    expect(await scanOnLoop(BIG, 0, false)).toMatchObject({ count: 1 });
    expect(await scanOnLoop(join(dir, 'missing'), 10, true)).toEqual({ error: 'ENOENT' });
    expect(await scanOnLoop(join(top, 'file'), 10, true)).toEqual({ error: 'ENOTDIR' });
  });

  it('the event loop scan lets the host run between batches of names and of lstat calls', async () => {
    /** event-loop turns that other work got while `scan` ran */
    const turnsDuring = async (scan: () => Promise<unknown>) => {
      let turns = 0;
      let ticking = true;
      const tick = () => {
        if (!ticking) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      await scan();
      ticking = false;
      return turns;
    };
    const batches = Math.floor(BIG_NAMES / SYNC_READ_BATCH);
    // names: a turn after each full batch
    const names = await turnsDuring(() => scanOnLoop(BIG, 1_000_000, false));
    expect(names).toBeGreaterThanOrEqual(batches);
    expect(names).toBeLessThanOrEqual(batches + 1);

    // lstat calls as well: as many directories as BIG has names take as many turns again
    const many = join(dir, 'many-dirs');
    mkdirSync(many);
    for (let i = 0; i < BIG_NAMES; i++) mkdirSync(join(many, `d${i}`));
    let r: unknown;
    const both = await turnsDuring(async () => (r = await scanOnLoop(many, 1_000_000, true)));
    expect(r).toMatchObject({ count: BIG_NAMES });
    expect((r as { dirs: unknown[] }).dirs).toHaveLength(BIG_NAMES);
    expect(both).toBeGreaterThanOrEqual(2 * batches);
    expect(both).toBeLessThanOrEqual(2 * batches + 1);
  });
});
