/**
 * POST /fs/explore's answer is not checked against its response schema at run time
 * (explore-json.ts), so it is checked here: the text is the serialised spec objects, byte for
 * byte, and parses with the route's response schema, on synthetic trees with awkward names and
 * times and on a real walk of a directory tree.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, statfsSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { exploreJson, exploreJsonChunks } from '../../handlers/fs/explore-json';
import { expandExplore, FLAG, isoTime, type CompactEntry, type ExploreOpResult } from '../../handlers/fs/explore';
import { exploreAnswer } from '../../handlers/fs/responses';
import { exploreTree, LOCAL_FS_TYPES } from '../../runtime/areas/fs/explore';
import { privateDir } from '../helpers/tmp';

const stats = (seed: number): number[] => [
  2049,
  0o100644 + (seed % 7),
  1,
  seed % 1000,
  0,
  0,
  4096,
  1_000_000 + seed,
  seed * 13,
  8,
  1_732_600_000_123.456 + seed,
  1_732_600_000_000,
  seed % 3 === 0 ? 8.64e15 + 1 : 1_732_600_001_000.5, // past Date's range: the epoch's text
  -1_000.25,
];

function tree(depth: number, width: number, seed = 1): CompactEntry[] {
  const names = [
    'plain',
    'with "quotes"',
    'back\\slash',
    'ünïcödé 東京 🚀',
    'ctl\u0001\u001f',
    'line\nbreak',
    '\u2028sep',
  ];
  const out: CompactEntry[] = [];
  for (let i = 0; i < width; i++) {
    const s = seed * 31 + i;
    const dir = depth > 0 && i % 2 === 0;
    const flags =
      (dir ? FLAG.directory : FLAG.file) | (i === 3 ? FLAG.symbolicLink : 0) | (dir && i === 4 ? FLAG.truncated : 0);
    out.push([`${names[s % names.length]}-${i}`, flags, stats(s), dir ? tree(depth - 1, width, s) : []]);
  }
  return out;
}

function result(path: string, entries: CompactEntry[]): ExploreOpResult {
  return {
    path,
    entries,
    total: 12345,
    truncated: true,
    truncatedBy: ['depth', 'entries'],
    limits: { depth: 3, maxEntries: 100_000, oneFileSystem: true },
    errors: [{ path: `${path}/"odd"`, message: 'EACCES' }],
  };
}

/** The answer as the route wrote it before it was streamed (one text, pieces joined once). */
function previousExploreJson(r: ExploreOpResult): string {
  const { entries, ...rest } = r;
  const pieces: string[] = [];
  for (const e of entries) pieces.push(JSON.stringify(expandExplore({ ...rest, entries: [e] }).files[0]));
  const tail = JSON.stringify(expandExplore({ ...rest, entries: [] }));
  return `{"files":[${pieces.join(',')}]${tail.slice('{"files":[]'.length)}`;
}

describe('explore JSON text', () => {
  for (const path of ['/', '/srv/data', '/srv/with space']) {
    it(`same bytes as the objects serialised, under ${path}`, () => {
      const r = result(path, tree(3, 6));
      const text = exploreJson(r);
      expect(text).toBe(JSON.stringify(expandExplore(r)));
      expect(exploreAnswer.safeParse(JSON.parse(text)).success).toBe(true);
    });
  }

  it('an empty tree and an untruncated answer', () => {
    const r: ExploreOpResult = { ...result('/x', []), truncated: false, truncatedBy: [], errors: [] };
    expect(exploreJson(r)).toBe(JSON.stringify(expandExplore(r)));
    expect(exploreJson(r)).toBe(
      '{"files":[],"total":12345,"truncated":false,"truncatedBy":[],"limits":{"depth":3,"maxEntries":100000,"oneFileSystem":true},"errors":[]}',
    );
  });

  it('streamed in pieces: the same bytes as before, each top-level subtree let go once written', () => {
    const r = result('/srv/data', tree(3, 9));
    const before = previousExploreJson(r);
    const expected = JSON.stringify(expandExplore(r));
    expect(before).toBe(expected);
    // exploreJson leaves its argument alone
    expect(exploreJson(r)).toBe(expected);
    expect(r.entries.every((e) => Array.isArray(e))).toBe(true);
    const pieces = [...exploreJsonChunks(r)];
    expect(pieces.join('')).toBe(expected);
    // 9 top-level subtrees of ~90 kB each: more than one piece, every piece but the last at least 64 KiB
    expect(pieces.length).toBeGreaterThan(2);
    for (const p of pieces.slice(0, -1)) expect(p.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(pieces[0].startsWith('{"files":[{"dev":2049,')).toBe(true);
    expect(pieces[pieces.length - 1].endsWith(',"errors":[{"path":"/srv/data/\\"odd\\"","message":"EACCES"}]}')).toBe(
      true,
    );
    // the generator consumed the compact entries as it went
    expect(r.entries.filter((e) => e !== undefined)).toEqual([]);
  });

  it('a client that stops reading stops the producer: later subtrees are never serialised', () => {
    const r = result('/x', tree(3, 9));
    const it = exploreJsonChunks(r);
    expect(it.next().done).toBe(false);
    expect(it.return()).toEqual({ done: true, value: undefined });
    expect(it.next()).toEqual({ done: true, value: undefined });
    expect(Array.isArray(r.entries[8])).toBe(true);
  });

  describe('on a real walk', () => {
    const dir = privateDir('ballast-speed-explore');
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    it('a tree with files, directories, a symlink and odd names', async () => {
      const top = join(dir, 'tree');
      for (let d = 0; d < 5; d++) {
        const sub = join(top, `dir ${d}`, 'deeper');
        mkdirSync(sub, { recursive: true });
        for (let f = 0; f < 20; f++) writeFileSync(join(top, `dir ${d}`, `file-"${f}"-é.txt`), 'x'.repeat(f));
        writeFileSync(join(sub, 'leaf'), 'leaf');
      }
      symlinkSync('/etc/passwd', join(top, 'link'));
      const r = await exploreTree({ path: top, depth: 2 }, { roots: [dir], maxEntriesCeiling: 100_000 });
      expect(r.total).toBe(5 + 5 * 21 + 1);
      const text = exploreJson(r);
      expect(text).toBe(JSON.stringify(expandExplore(r)));
      expect(text).toBe(previousExploreJson(r));
      expect(exploreAnswer.parse(JSON.parse(text)).truncatedBy).toEqual(['depth']);
      expect(LOCAL_FS_TYPES.has(Number(statfsSync(dir).type)), `${dir} must be on a local filesystem`).toBe(true);
      // the synchronous batches (local filesystem, this one) and the async lstat pool (any
      // other filesystem) give the same answer, also when the entry cap cuts the walk
      for (const opts of [{ depth: 2 }, { depth: 3, maxEntries: 37 }, { maxEntries: 5 }]) {
        const local = await exploreTree({ path: top, ...opts }, { roots: [dir], maxEntriesCeiling: 100_000 });
        const remote = await exploreTree(
          { path: top, ...opts },
          { roots: [dir], maxEntriesCeiling: 100_000, localFsTypes: new Set() },
        );
        expect(exploreJson(local)).toBe(exploreJson(remote));
      }
    });
  });
});

describe('explore times', () => {
  /** what the answer promises: Date's text, or the epoch's outside Date's range */
  const expected = (ms: number) => {
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString();
  };

  it("isoTime is toISOString (the epoch's outside Date's range), whatever time came before", () => {
    const edge = [
      0,
      -0,
      0.4,
      -0.4,
      -1.5,
      999.9,
      1000,
      -1000.25,
      1_732_600_000_123.456,
      8.64e15,
      -8.64e15,
      8.64e15 + 2,
      -8.64e15 - 2,
      NaN,
      Infinity,
      -Infinity,
      253_402_300_799_999,
      253_402_300_800_000,
      -62_198_755_200_000.5,
    ];
    // the same second again with another millisecond (the kept second's text), and the next
    const near = [1_732_600_000_001, 1_732_600_000_010, 1_732_600_000_100, 1_732_600_000_999, 1_732_600_001_000];
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const randoms = Array.from({ length: 2000 }, () => (random() - 0.5) * 2e13 + random());
    for (const list of [edge, near, [...near].reverse(), randoms, edge.flatMap((x) => [x, x + 0.5, x - 0.5])])
      for (const ms of list) expect(isoTime(ms), String(ms)).toBe(expected(ms));
  });
});
