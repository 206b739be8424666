/**
 * Every recording of a command several areas run (fixtures/{lsblk,findmnt}/*.yaml) against its
 * reviewed `<name>.expected.json`: the table in ../fixture-tables.ts, run by the one runner.
 */
import { expect, it } from 'vitest';
import { fixturePath, fixturesOf, runFixtureTable } from '../../helpers/fixture-runner';
import { TOOLS_FIXTURES } from '../fixture-tables';

runFixtureTable(TOOLS_FIXTURES);

it('the base replay set (fixtures without a scenario) has one fixture per argv', () => {
  // replay keeps the last loaded fixture per argv, so two base fixtures with one argv would
  // make route tests depend on file order; the others carry a `scenario`
  const seen = new Map<string, string>();
  for (const fx of fixturesOf(TOOLS_FIXTURES)) {
    if (fx.scenario !== undefined || fx.once) continue;
    const key = JSON.stringify(fx.argv);
    expect(seen.get(key), `${fixturePath(fx)} repeats the argv of ${seen.get(key)}`).toBeUndefined();
    seen.set(key, fixturePath(fx));
  }
});
