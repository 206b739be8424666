/**
 * Every upstream Lustre sample (../shared/upstream-samples/lustre) that a route's parser reads is
 * copied byte for byte into fixtures/lustre/<command>/ and parsed by that parser; the answer must
 * equal `<name>.expected.json` beside it, which is written by hand from the sample and FORMATS.md
 * (never from the parser: the commit that adds or changes one says what was checked against
 * what). A sample of a format no route reads is listed as `unread` and has no copy. A new sample
 * with no rule, no copy or no expected answer fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repo, ruleFor, sharedDir } from './samples';

const src = join(sharedDir(), 'upstream-samples', 'lustre');
const samples: { dir: string; file: string }[] = [];
for (const dir of readdirSync(src).sort()) {
  if (!statSync(join(src, dir)).isDirectory()) continue;
  for (const file of readdirSync(join(src, dir)).sort()) samples.push({ dir, file });
}

describe('upstream Lustre samples', () => {
  it('are all here (SOURCES.md counts 94)', () => {
    expect(samples.length).toBe(94);
  });

  for (const { dir, file } of samples) {
    it(`${dir}/${file} is copied, parsed and matches its reviewed answer`, () => {
      const rule = ruleFor(dir, file);
      expect(rule, `no parser rule covers ${dir}/${file}: add one to test/parsers/dfs/samples.ts`).toBeDefined();
      const copy = join(repo, 'fixtures', 'lustre', dir, file);
      if (!rule!.parser) {
        expect(existsSync(copy) || existsSync(`${copy}.expected.json`), `${copy}: ${rule!.unread}`).toBe(false);
        return;
      }
      expect(existsSync(copy), `${copy} missing: run test/tools/dfs/import-samples.ts`).toBe(true);
      expect(existsSync(`${copy}.expected.json`), `write ${copy}.expected.json by hand from the sample`).toBe(true);
      const text = readFileSync(join(src, dir, file), 'utf8');
      expect(readFileSync(copy, 'utf8')).toBe(text);
      const expected = JSON.parse(readFileSync(`${copy}.expected.json`, 'utf8'));
      expect(JSON.parse(JSON.stringify(rule!.parser(text)))).toEqual(expected);
    });
  }

  it("fixtures/lustre carries the samples' SOURCES.md and FORMATS.md unchanged", () => {
    for (const f of ['SOURCES.md', 'FORMATS.md'])
      expect(readFileSync(join(repo, 'fixtures', 'lustre', f), 'utf8')).toBe(readFileSync(join(src, f), 'utf8'));
  });

  it('CHECKED.md says what each expected answer was checked against, for exactly the copied samples', () => {
    const headings = [
      ...readFileSync(join(repo, 'fixtures', 'lustre', 'CHECKED.md'), 'utf8').matchAll(/^## (\S+)$/gm),
    ].map((m) => m[1]);
    const read = samples.filter((s) => ruleFor(s.dir, s.file)?.parser).map((s) => `${s.dir}/${s.file}`);
    expect(headings.sort()).toEqual(read.sort());
  });

  it('every export of handlers/dfs/parse is used by the area outside parse/ (no parser kept only for its tests)', () => {
    const parseDir = join(repo, 'handlers', 'dfs', 'parse');
    const users = [
      join(repo, 'handlers', 'dfs'),
      join(repo, 'handlers', 'dfs', 'routes'),
      join(repo, 'handlers', 'dfs', 'render'),
    ]
      .flatMap((d) =>
        readdirSync(d)
          .filter((f) => f.endsWith('.ts'))
          .map((f) => readFileSync(join(d, f), 'utf8')),
      )
      .join('\n');
    const unused: string[] = [];
    for (const f of readdirSync(parseDir).filter((x) => x.endsWith('.ts'))) {
      const src = readFileSync(join(parseDir, f), 'utf8');
      for (const m of src.matchAll(/^export (?:async )?(?:function|const|class|let) ([A-Za-z_$][\w$]*)/gm))
        if (!new RegExp(`\\b${m[1]}\\b`).test(users)) unused.push(`${f}: ${m[1]}`);
    }
    expect(unused).toEqual([]);
  });

  it('fixtures/lustre holds nothing that is not an upstream sample', () => {
    const names = new Set(samples.map((s) => `${s.dir}/${s.file}`));
    for (const dir of readdirSync(join(repo, 'fixtures', 'lustre'))) {
      if (!statSync(join(repo, 'fixtures', 'lustre', dir)).isDirectory()) continue;
      for (const f of readdirSync(join(repo, 'fixtures', 'lustre', dir))) {
        const base = f.replace(/\.expected\.json$/, '');
        expect(names.has(`${dir}/${base}`), `${dir}/${f}`).toBe(true);
      }
    }
  });
});
