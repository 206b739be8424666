/**
 * Drafts `<name>.expected.json` for the fixtures record-fixtures.ts makes that have none yet (the
 * fs table's and the lsblk/findmnt ones of handlers/tools):
 *
 *   npx vite-node test/tools/fs/draft-expected.ts [--force name ...]
 *
 * A draft is only what the current parser says, so a parser bug becomes the expected result.
 * It counts as a test only after someone has reviewed it and recorded the review in
 * fixtures/REVIEW.md (the section of its directory). The review checks every field against the
 * fixture's stdout/stderr and the tool's documentation (or a real run), fixes the parser and the
 * draft where the parser is wrong, and says what was checked against what. The commit that adds
 * the expected file says the same. Existing expected files are never overwritten unless named
 * with --force; a forced redraft needs a new review.
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
    console.log(
      `drafted ${path.replace(/\.yaml$/, '.expected.json')} (review it and record the review in fixtures/REVIEW.md)`,
    );
  }
}
