/**
 * Every fs fixture (fixtures/{xxhsum,getfacl,setfacl,lsblk,findmnt,wipefs,swaps}/*.yaml)
 * against its reviewed `<name>.expected.json`. Which parser reads which fixture is decided in
 * fixture-parsers.ts (shared with the drafting tool).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseXxhsumSums } from '../../../handlers/fs/parse/xxhsum';
import { expectedSchema, FS_FIXTURE_TOOLS, isXxhsumCheck, outcome, xxhsumFileNames } from './fixture-parsers';

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');

it('the base replay set (fixtures without a scenario) has one fixture per argv', () => {
  // replay keeps the last loaded fixture per argv, so two base fixtures with one argv would
  // make route tests depend on file order; the others carry a `scenario`
  const seen = new Map<string, string>();
  for (const tool of FS_FIXTURE_TOOLS) {
    const dir = join(FIXTURES, tool);
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      const fx = readFixture(join(dir, f));
      if (fx.scenario !== undefined || fx.once) continue;
      const key = JSON.stringify(fx.argv);
      expect(seen.get(key), `${tool}/${f} repeats the argv of ${seen.get(key)}`).toBeUndefined();
      seen.set(key, `${tool}/${f}`);
    }
  }
});

describe.each(FS_FIXTURE_TOOLS)('fixtures/%s', (tool) => {
  const dir = join(FIXTURES, tool);
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();

  it('has fixtures, each with a reviewed expected.json, and no orphan expected files', () => {
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(existsSync(join(dir, `${n}.expected.json`)), `${tool}/${n}.expected.json`).toBe(true);
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.expected.json'))) {
      expect(names, `orphan ${tool}/${f}`).toContain(f.slice(0, -'.expected.json'.length));
    }
  });

  it.each(names)('%s', (name) => {
    const fixture = readFixture(join(dir, `${name}.yaml`));
    expect(fixture.argv[0]).toMatch(/^\//); // absolute binaries only
    const expected: unknown = JSON.parse(readFileSync(join(dir, `${name}.expected.json`), 'utf8'));
    if (!(typeof expected === 'object' && expected !== null && 'parseError' in expected)) {
      // the expected file itself must be a valid value of the parser's declared shape
      expect(expectedSchema(tool, fixture).safeParse(expected).error).toBeUndefined();
    }
    expect(outcome(tool, fixture)).toEqual(expected);

    // generate output without a newline inside a name parses the same without the names
    if (tool === 'xxhsum' && !isXxhsumCheck(fixture.argv)) {
      const names = xxhsumFileNames(fixture.argv);
      if (!names.some((n) => n.includes('\n'))) expect(parseXxhsumSums(fixture.stdout)).toEqual(expected);
    }
  });
});
