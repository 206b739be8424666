/**
 * The one fixture runner of the parsers tier. Each area gives a table (test/parsers/fixture-tables.ts):
 * which recorded invocations (`fixtures/<dir>/**.yaml`) are read by which pure parser, as a route
 * would decide it, and the schema a parse must satisfy. Every fixture is run against its reviewed
 * `<name>.expected.json` (a parse result, or `{"parseError": {"parser", "line"}}` when the parser
 * must refuse the output, see parse-error.ts). A fixture no entry matches, or that two entries
 * match, fails the run, so no recording goes unchecked.
 */
import { filesUnder } from './files';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  entriesFor,
  entryFor,
  expectedFileOf,
  FIXTURES_DIR,
  fixturePath,
  fixturesOf,
  type FixtureTable,
} from './fixture-table';
import { expectedParseError, parseError } from './parse-error';

export * from './fixture-table';

const walkExpected = (dir: string) => filesUnder(dir, (n) => n.endsWith('.expected.json'));

/** One describe per table: the fixture count, no orphan expected file, then one test per fixture. */
export function runFixtureTable(table: FixtureTable): void {
  const fixtures = fixturesOf(table);
  describe(`${table.area} fixtures (${table.dirs.map((d) => `fixtures/${d}`).join(', ')})`, () => {
    it('are there, and every expected.json belongs to a fixture', () => {
      expect(fixtures.length).toBeGreaterThanOrEqual(Math.max(1, table.minFixtures ?? 1));
      const yamls = new Set(fixtures.map((f) => f.file));
      for (const d of table.dirs) {
        for (const e of walkExpected(join(FIXTURES_DIR, d)))
          expect(yamls.has(e.replace(/\.expected\.json$/, '.yaml')), `orphan ${relative(FIXTURES_DIR, e)}`).toBe(true);
      }
    });

    for (const f of fixtures) {
      const path = fixturePath(f);
      const found = entriesFor(table, f);
      const title = found.length === 1 ? `${path} (${found[0].name})` : path;
      it(title, () => {
        table.check?.(f);
        const entry = entryFor(table, f);
        const expectedFile = expectedFileOf(f);
        if (!entry.parse) {
          expect(existsSync(expectedFile), `${path}: a command with no parse has no expected.json`).toBe(false);
          return;
        }
        expect(existsSync(expectedFile), `${relative(FIXTURES_DIR, expectedFile)} missing`).toBe(true);
        const expected: unknown = JSON.parse(readFileSync(expectedFile, 'utf8'));
        const refusal = expectedParseError(expected);
        if (table.refuseFailed && f.code !== 0)
          expect(refusal, `${path}: a failed command's output is refused, not parsed`).not.toBeNull();
        if (refusal) {
          parseError(() => entry.parse!(f), refusal);
          return;
        }
        const got = entry.parse(f);
        expect(got).toEqual(expected);
        // the parse is a valid value of the shape the route declares (parser and schema agree)
        if (entry.schema) expect(entry.schema.safeParse(got).error).toBeUndefined();
      });
    }
  });
}
