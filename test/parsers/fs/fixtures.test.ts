/**
 * Every fs fixture (fixtures/{xxhsum,getfacl,setfacl,wipefs,swaps}/*.yaml) against its reviewed
 * `<name>.expected.json`: the table in ../fixture-tables.ts, run by the one runner. lsblk and
 * findmnt, which pod reads too, are run by test/parsers/tools/fixtures.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseXxhsumSums } from '../../../handlers/fs/parse/xxhsum';
import { expectedFileOf, fixturePath, fixturesOf, runFixtureTable } from '../../helpers/fixture-runner';
import { FS_FIXTURES, isXxhsumCheck, xxhsumFileNames } from '../fixture-tables';
import { readFileSync } from 'node:fs';

runFixtureTable(FS_FIXTURES);

const fixtures = fixturesOf(FS_FIXTURES);

it('the base replay set (fixtures without a scenario) has one fixture per argv', () => {
  // replay keeps the last loaded fixture per argv, so two base fixtures with one argv would
  // make route tests depend on file order; the others carry a `scenario`
  const seen = new Map<string, string>();
  for (const fx of fixtures) {
    if (fx.scenario !== undefined || fx.once) continue;
    const key = JSON.stringify(fx.argv);
    expect(seen.get(key), `${fixturePath(fx)} repeats the argv of ${seen.get(key)}`).toBeUndefined();
    seen.set(key, fixturePath(fx));
  }
});

describe('xxhsum generate output without a newline inside a name parses the same without the names', () => {
  const generate = fixtures.filter(
    (f) =>
      fixturePath(f).startsWith('xxhsum/') &&
      !isXxhsumCheck(f.argv) &&
      !xxhsumFileNames(f.argv).some((n) => n.includes('\n')),
  );
  it('has such fixtures', () => expect(generate.length).toBeGreaterThan(0));
  it.each(generate.map((f) => [fixturePath(f), f] as const))('%s', (_path, f) => {
    const expected: unknown = JSON.parse(readFileSync(expectedFileOf(f), 'utf8'));
    // a fixture whose expected result is a parse error must still fail to parse here
    if (typeof expected === 'object' && expected !== null && 'parseError' in expected)
      expect(() => parseXxhsumSums(f.stdout)).toThrow();
    else expect(parseXxhsumSums(f.stdout)).toEqual(expected);
  });
});
