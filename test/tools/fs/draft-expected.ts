/**
 * Drafts `<name>.expected.json` for the fixtures record-fixtures.ts makes that have none yet (the
 * fs table's and the lsblk/findmnt ones of handlers/tools):
 *
 *   npx vite-node test/tools/fs/draft-expected.ts [--force name ...]
 *
 * A draft is what the current parser says. It is NOT a test until a person has read it
 * against the fixture's stdout and corrected it where the parser is wrong; existing
 * expected files are never overwritten unless named with --force.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { expectedFileOf, fixtureOutcome, fixturePath, fixturesOf } from '../../helpers/fixture-table';
import { FS_FIXTURES, TOOLS_FIXTURES } from '../../parsers/fixture-tables';

const force = new Set(
  process.argv.slice(process.argv.indexOf('--force') + 1).filter(() => process.argv.includes('--force')),
);

for (const table of [FS_FIXTURES, TOOLS_FIXTURES]) {
  for (const f of fixturesOf(table)) {
    const path = fixturePath(f);
    const name = path.slice(path.lastIndexOf('/') + 1, -'.yaml'.length);
    const target = expectedFileOf(f);
    if (existsSync(target) && !force.has(name)) continue;
    writeFileSync(target, JSON.stringify(fixtureOutcome(table, f), null, 2) + '\n');
    console.log(`drafted ${path.replace(/\.yaml$/, '.expected.json')} (review it)`);
  }
}
