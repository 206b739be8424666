/**
 * POST /fs/explore's answer is not checked against its response schema at run time
 * (explore-json.ts), so it is checked here: the text is the serialised spec objects, byte for
 * byte, and parses with the route's response schema, on synthetic trees with awkward names and
 * times and on a real walk of a directory tree.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { exploreJson } from '../../handlers/fs/explore-json';
import {
  expandExplore,
  exploreResultSchema,
  FLAG,
  type CompactEntry,
  type ExploreOpResult,
} from '../../handlers/fs/explore';
import { exploreTree } from '../../runtime/areas/fs/explore';
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

describe('explore JSON text', () => {
  for (const path of ['/', '/srv/data', '/srv/with space']) {
    it(`same bytes as the objects serialised, under ${path}`, () => {
      const r = result(path, tree(3, 6));
      const text = exploreJson(r);
      expect(text).toBe(JSON.stringify(expandExplore(r)));
      expect(exploreResultSchema.safeParse(JSON.parse(text)).success).toBe(true);
    });
  }

  it('an empty tree and an untruncated answer', () => {
    const r: ExploreOpResult = { ...result('/x', []), truncated: false, truncatedBy: [], errors: [] };
    expect(exploreJson(r)).toBe(JSON.stringify(expandExplore(r)));
    expect(exploreJson(r)).toBe(
      '{"files":[],"total":12345,"truncated":false,"truncatedBy":[],"limits":{"depth":3,"maxEntries":100000,"oneFileSystem":true},"errors":[]}',
    );
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
      expect(exploreResultSchema.parse(JSON.parse(text)).truncatedBy).toEqual(['depth']);
    });
  });
});
