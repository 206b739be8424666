/**
 * POST /fs/explore's streamed walk (runtime/areas/fs/explore-dfs.ts) against the breadth-first
 * one (explore.ts walk()), on real trees: the same bytes whenever the stream is used, the
 * count that decides it, leaving a stream part way, a worker that dies mid-walk, libuv's path
 * for other filesystems, and both bindings (the direct one streams, the protocol collects).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exploreJson, exploreJsonStream } from '../../handlers/fs/explore-json';
import {
  isExploreStream,
  type ExploreOpPayload,
  type ExploreOpResult,
  type ExploreStream,
} from '../../handlers/fs/explore';
import { exploreAnswer, type ExploreEntry } from '../../handlers/fs/responses';
import { exploreTree, exploreWalk, type ExploreOptions } from '../../runtime/areas/fs/explore';
import { ErrorList } from '../../runtime/areas/fs/explore-common';
import { defaultPoolSize, ExplorePool, type WorkerAnswer, type WorkerTask } from '../../runtime/areas/fs/explore-pool';
import { makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const dir = privateDir('ballast-explore-stream');
const top = join(dir, 'tree');
/** entries below `top`, every level */
let entries = 0;

beforeAll(() => {
  const add = (path: string, make: () => void) => {
    make();
    entries++;
    return path;
  };
  add(join(top, 'empty dir'), () => mkdirSync(join(top, 'empty dir'), { recursive: true }));
  for (let d = 0; d < 4; d++) {
    const sub = add(join(top, `d${d}`), () => mkdirSync(join(top, `d${d}`)));
    for (let f = 0; f < 300; f++)
      add(join(sub, `f"${f}"\\é`), () => writeFileSync(join(sub, `f"${f}"\\é`), 'x'.repeat(f % 7)));
    let deep = sub;
    for (let l = 0; l < 4; l++) {
      deep = add(join(deep, `level ${l}`), () => mkdirSync(join(deep, `level ${l}`)));
      add(join(deep, 'leaf'), () => writeFileSync(join(deep, 'leaf'), String(l)));
    }
  }
  add(join(top, 'link'), () => symlinkSync('/etc/passwd', join(top, 'link')));
  add(join(top, 'fifo'), () => execFileSync('mkfifo', [join(top, 'fifo')]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base: ExploreOptions = { roots: [dir], maxEntriesCeiling: 100_000 };

async function textOf(r: ExploreOpResult | ExploreStream): Promise<string> {
  if (!isExploreStream(r)) return exploreJson(r);
  let text = '';
  for await (const piece of exploreJsonStream(r)) text += piece;
  return text;
}

const breadthFirst = async (req: ExploreOpPayload, o: ExploreOptions = base) =>
  exploreJson(await exploreTree(req, { ...o, stream: false }));

describe('the streamed walk', () => {
  it('answers the breadth-first bytes: depths, a symlink, a fifo, odd names, an empty directory', async () => {
    for (const opts of [{}, { depth: 1 }, { depth: 2 }, { depth: 4 }, { oneFileSystem: false }]) {
      const req = { path: top, ...opts };
      const r = await exploreWalk(req, base);
      expect(isExploreStream(r), JSON.stringify(opts)).toBe(true);
      const text = await textOf(r);
      expect(text).toBe(await breadthFirst(req));
      const parsed = exploreAnswer.parse(JSON.parse(text));
      if (!opts.depth) expect(parsed.total).toBe(entries);
    }
  });

  it("hands the text on in pieces below V8's large-object size, also through directories of 300 files", async () => {
    const r = await exploreWalk({ path: top }, base);
    if (!isExploreStream(r)) throw new Error('expected the streamed walk');
    const sizes: number[] = [];
    for await (const piece of exploreJsonStream(r)) sizes.push(piece.length);
    // ~760 KB in all: a piece per 1,024 records (the walk's batch) would be one of ~600 KB
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(700_000);
    expect(sizes.length).toBeGreaterThan(8);
    expect(Math.max(...sizes)).toBeLessThan(128 * 1024);
  });

  it('is used exactly when the cap does not cut: a cap of the tree size streams, one less does not', async () => {
    const exact = await exploreWalk({ path: top, maxEntries: entries }, base);
    expect(isExploreStream(exact)).toBe(true);
    const exactText = await textOf(exact);
    expect(JSON.parse(exactText)).toMatchObject({ total: entries, truncated: false });
    expect(exactText).toBe(await breadthFirst({ path: top, maxEntries: entries }));

    const under = await exploreWalk({ path: top, maxEntries: entries - 1 }, base);
    expect(isExploreStream(under)).toBe(false);
    const underText = await textOf(under);
    expect(JSON.parse(underText)).toMatchObject({ total: entries - 1, truncated: true, truncatedBy: ['entries'] });
    // the cap keeps the shallowest entries: every top-level name is there
    expect((JSON.parse(underText) as { files: unknown[] }).files).toHaveLength(7);
  });

  it('a tree that grows past the cap after the count: the cap still holds, the directory is marked', async () => {
    const r = await exploreWalk({ path: top, maxEntries: entries }, base);
    expect(isExploreStream(r)).toBe(true);
    // the walk is reading d0 now; this directory, four levels down, it has not reached yet
    const grown = join(top, 'd0', 'level 0', 'level 1', 'level 2');
    for (let i = 0; i < 10; i++) writeFileSync(join(grown, `aaa${i}`), '');
    try {
      const answer = exploreAnswer.parse(JSON.parse(await textOf(r)));
      expect(answer).toMatchObject({ total: entries, truncated: true, truncatedBy: ['entries'] });
    } finally {
      for (let i = 0; i < 10; i++) rmSync(join(grown, `aaa${i}`));
    }
  });

  it('through libuv (any other filesystem) gives the same bytes as the workers', async () => {
    const viaLibuv = { ...base, localFsTypes: new Set<number>() };
    for (const opts of [{}, { depth: 2 }, { maxEntries: 50 }]) {
      const req = { path: top, ...opts };
      expect(await textOf(await exploreWalk(req, viaLibuv))).toBe(await breadthFirst(req));
    }
  });

  it('a worker that dies mid-walk: its directories are read on the event loop, the answer is whole', async () => {
    const pool = new ExplorePool({ size: 1 });
    const errors = vi.spyOn(console, 'error');
    try {
      const r = await exploreWalk({ path: top }, { ...base, pool });
      expect(isExploreStream(r)).toBe(true);
      await pool.close(); // the read-ahead in flight fails over
      expect(await textOf(r)).toBe(await breadthFirst({ path: top }));
      expect(errors).not.toHaveBeenCalled(); // closing on purpose is no failure
    } finally {
      errors.mockRestore();
      await pool.close();
    }
  });

  it("a name whose lstat failed on a worker is left out, its error listed (not when it is gone), the others' numbers their own", async () => {
    const d1 = join(top, 'd1');
    // the worker's answer for d1 as if two lstat calls had failed, in the middle of the listing
    class Failing extends ExplorePool {
      override async run(task: WorkerTask): Promise<WorkerAnswer> {
        const a = await super.run(task);
        if (a.kind !== 'list' || task.kind !== 'list' || task.dir !== d1) return a;
        const codes = a.names.map((n) => (n === 'f"13"\\é' ? 'EIO' : n === 'f"14"\\é' ? 'ENOENT' : null));
        return { ...a, codes };
      }
    }
    const pool = new Failing();
    try {
      const failing = exploreAnswer.parse(
        JSON.parse(await textOf(await exploreWalk({ path: top }, { ...base, pool }))),
      );
      const whole = exploreAnswer.parse(JSON.parse(await textOf(await exploreWalk({ path: top }, base))));
      const fields = (e: ExploreEntry) => [e.name, e.path, e.ino, e.size, e.mode, e.isFile, e.isDirectory, e.file_num];
      const kids = (a: typeof whole) => a.files.find((f) => f.name === 'd1')!.children;
      expect(kids(failing).map(fields)).toEqual(
        kids(whole)
          .filter((e) => e.name !== 'f"13"\\é' && e.name !== 'f"14"\\é')
          .map(fields),
      );
      expect(kids(failing)).toHaveLength(299); // 300 files and `level 0`, less two
      expect(failing.files.find((f) => f.name === 'd1')!.file_num).toBe(299);
      expect(failing.total).toBe(whole.total - 2);
      expect(failing.errors).toEqual([{ path: join(d1, 'f"13"\\é'), message: 'EIO' }]);
      expect(whole.errors).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  it('a breadth-first walk whose pool room is held by another task goes on when that task ends', async () => {
    // one place on the pool, taken by a slow task that is not the walk's (another walk's, or
    // the read-ahead a finished count left in flight): its answer must wake the waiting walk
    const req = { path: top, maxEntries: 50 };
    // a walk lstats a directory before it reads it, and the read can move the atime once
    // (relatime): the second walk is the one that answers like every later one
    await breadthFirst(req);
    const expected = await breadthFirst(req);
    const pool = new ExplorePool({ size: 1, perWorker: 1 });
    try {
      const other = pool.run({ kind: 'lstat', paths: Array.from({ length: 200_000 }, (_, i) => `${dir}/none-${i}`) });
      expect(pool.hasRoom()).toBe(false);
      let timer: NodeJS.Timeout | undefined;
      const walked = await Promise.race([
        exploreTree(req, { ...base, pool, stream: false }).then(exploreJson),
        new Promise<string>((r) => (timer = setTimeout(() => r('still waiting after 10 s'), 10_000))),
      ]);
      clearTimeout(timer);
      expect((await other).kind).toBe('lstat');
      expect(walked).toBe(expected);
    } finally {
      await pool.close();
    }
  });

  it('leaving a stream part way stops the walk and frees its place for the next one', async () => {
    // one walk at a time and four waiting: a stream that kept its place would stall the sixth
    for (let i = 0; i < 6; i++) {
      const r = await exploreWalk({ path: top }, base);
      expect(isExploreStream(r)).toBe(true);
      const it = exploreJsonStream(r as ExploreStream)[Symbol.asyncIterator]();
      expect((await it.next()).done).toBe(false);
      await it.return(undefined);
    }
    expect(await textOf(await exploreWalk({ path: top, depth: 1 }, base))).toBe(
      await breadthFirst({ path: top, depth: 1 }),
    );
  }, 20_000);
});

describe('the answer errors', () => {
  it('keeps the first 100 in breadth-first order of their paths, whichever order they came in', () => {
    const list = new ErrorList();
    const paths = ['/t/b/x', '/t/a', '/t/c', '/t/a/z', '/t/a/b'];
    for (const p of paths) list.add(p, 'EACCES');
    expect(list.list().map((e) => e.path)).toEqual(['/t/a', '/t/c', '/t/a/b', '/t/a/z', '/t/b/x']);
    const many = new ErrorList();
    for (let i = 150; i > 0; i--) many.add(`/t/n${String(i).padStart(3, '0')}`, 'EIO');
    many.add('/t/deeper/one', 'EIO');
    expect(many.list()).toHaveLength(100);
    expect(many.list()[0].path).toBe('/t/n001');
    expect(many.list()[99].path).toBe('/t/n100');
  });
});

describe('through the bindings', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ config: { settings: { fs: { readRoots: [dir] } } } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('the direct binding hands over the stream; the audit row is written once it is read', async () => {
    const a = await t.host.system.direct.call('fs/explore', { path: top }, 'req-stream');
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(isExploreStream(a.value)).toBe(true);
    const audit = () =>
      t.host.db.prepare("SELECT note FROM audit_log WHERE kind = 'fs/explore' AND request_id = 'req-stream'").all();
    expect(audit()).toEqual([]);
    const text = await textOf(a.value as ExploreStream);
    expect(text).toBe(await breadthFirst({ path: top }));
    expect(audit()).toEqual([{ note: `${entries} entries` }]);
  });

  it('the binding protocol carries the collected tree, as an isolate reads it', async () => {
    const res = await t.host.system.fetch('http://system/system/fs/explore', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-wire' },
      body: JSON.stringify({ path: top, depth: 3 }),
    });
    expect(res.status).toBe(200);
    const tree = (await res.json()) as ExploreOpResult;
    expect(Array.isArray(tree.entries)).toBe(true);
    expect(exploreJson(tree)).toBe(await breadthFirst({ path: top, depth: 3 }));
  });
});

describe("explore's worker pool", () => {
  it('leaves a core for the event loop: at least one worker, at most four', () => {
    expect([1, 2, 3, 4, 5, 6, 64].map(defaultPoolSize)).toEqual([1, 1, 2, 3, 4, 4, 4]);
  });
});
