/**
 * Prints what the parser makes of a fixture, as a starting point for its `.expected.json`.
 * The expected file must then be read against the fixture and corrected by hand: it is a
 * reviewed statement of what the output means, not a snapshot.
 *
 *   npx vite-node test/tools/network/draft-expected.ts fixtures/ip/link-show-netns.yaml
 */
import { readFixture } from '../../../runtime/system/fixture-file';
import { parserFor, runParser } from '../../parsers/network/dispatch';
import { ParseError } from '../../../handlers/core/parse-error';

for (const file of process.argv.slice(2)) {
  const f = readFixture(file);
  try {
    console.log(JSON.stringify(runParser(parserFor(f), f.stdout), null, 2));
  } catch (e) {
    if (e instanceof ParseError) console.log(JSON.stringify({ throws: 'ParseError', line: e.line ?? null }, null, 2));
    else throw e;
  }
}
