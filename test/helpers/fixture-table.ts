/**
 * The fixture tables' types and lookups (no vitest here: the drafting tools under test/tools/
 * use them too). The runner that turns a table into tests is fixture-runner.ts.
 */
import { join, relative, resolve } from 'node:path';
import type * as z from 'zod';
import { loadFixtureDir, type Fixture } from '../../runtime/system/fixture-file';
import { parseOutcome } from './parse-error';

export const FIXTURES_DIR = resolve(import.meta.dirname, '../../fixtures');

export interface FixtureEntry {
  /** names the entry in test titles: the parser, or the kind of command */
  name: string;
  /** which fixtures it reads: a pattern on the path under fixtures/ (`tc/class-one.yaml`), or a predicate */
  match: RegExp | ((f: Fixture, path: string) => boolean);
  /** the pure parser, as the route calls it on this output; null: no parse is expected (a command for replay only) */
  parse: ((f: Fixture) => unknown) | null;
  /** what every successful parse must satisfy (the schema the route answers with) */
  schema?: z.ZodType;
}

export interface FixtureTable {
  /** the area (test titles) */
  area: string;
  /** directories under fixtures/ holding the area's recordings (walked recursively) */
  dirs: string[];
  entries: FixtureEntry[];
  /** the area has at least this many fixtures */
  minFixtures?: number;
  /** a failed command's output must be refused by its parser (expected.json is a parseError) */
  refuseFailed?: boolean;
  /** a check of each fixture's recording itself (absolute binary, a source, …) */
  check?: (f: Fixture) => void;
}

/** The path of a fixture under fixtures/ (`tc/routes/ip-link-show.yaml`). */
export const fixturePath = (f: Fixture): string => relative(FIXTURES_DIR, f.file ?? '');
export const expectedFileOf = (f: Fixture): string => (f.file ?? '').replace(/\.yaml$/, '.expected.json');

export function fixturesOf(table: FixtureTable): Fixture[] {
  return table.dirs.flatMap((d) => loadFixtureDir(join(FIXTURES_DIR, d)));
}

/** Every entry of `table` that reads `f`. */
export function entriesFor(table: FixtureTable, f: Fixture): FixtureEntry[] {
  const path = fixturePath(f);
  return table.entries.filter((e) => (e.match instanceof RegExp ? e.match.test(path) : e.match(f, path)));
}

/** The one entry that reads `f`; throws when none or several do. */
export function entryFor(table: FixtureTable, f: Fixture): FixtureEntry {
  const found = entriesFor(table, f);
  if (found.length === 0) throw new Error(`${fixturePath(f)} has no entry in the ${table.area} fixture table`);
  if (found.length > 1)
    throw new Error(`${fixturePath(f)} matches several ${table.area} entries: ${found.map((e) => e.name).join(', ')}`);
  return found[0];
}

/** What the table's parser makes of `f`: its result or `{parseError}` (for drafting expected files). */
export function fixtureOutcome(table: FixtureTable, f: Fixture): unknown {
  const { parse } = entryFor(table, f);
  if (!parse) throw new Error(`${fixturePath(f)} is a command with no parse`);
  return parseOutcome(() => parse(f));
}
