/**
 * Drafts `<name>.expected.json` for fs fixtures that have none yet:
 *
 *   npx vite-node test/tools/fs/draft-expected.ts [--force name ...]
 *
 * A draft is what the current parser says. It is NOT a test until a person has read it
 * against the fixture's stdout and corrected it where the parser is wrong; existing
 * expected files are never overwritten unless named with --force.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readFixture } from '../../../runtime/system/fixture-file';
import { FS_FIXTURE_TOOLS, outcome } from '../../parsers/fs/fixture-parsers';

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');
const force = new Set(process.argv.slice(process.argv.indexOf('--force') + 1).filter(() => process.argv.includes('--force')));

for (const tool of FS_FIXTURE_TOOLS) {
  const dir = join(FIXTURES, tool);
  if (!existsSync(dir)) continue;
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.yaml')) continue;
    const name = file.slice(0, -'.yaml'.length);
    const target = join(dir, `${name}.expected.json`);
    if (existsSync(target) && !force.has(name)) continue;
    const result = outcome(tool, readFixture(join(dir, file)));
    writeFileSync(target, JSON.stringify(result, null, 2) + '\n');
    console.log(`drafted ${tool}/${name}.expected.json (review it)`);
  }
}
