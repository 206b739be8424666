/**
 * Prints what the parser makes of a fixture, as a starting point for its `.expected.json`.
 * The expected file must then be read against the fixture and corrected by hand: it is a
 * reviewed statement of what the output means, not a snapshot.
 *
 *   npx vite-node test/tools/network/draft-expected.ts fixtures/ip/link-show-netns.yaml
 */
import { readFixture } from '../../../runtime/system/fixture-file';
import { fixtureOutcome } from '../../helpers/fixture-table';
import { NETWORK_FIXTURES } from '../../parsers/fixture-tables';

// a refusal prints as {"parseError": {"parser", "line"}}, the form expected.json uses
for (const file of process.argv.slice(2))
  console.log(JSON.stringify(fixtureOutcome(NETWORK_FIXTURES, readFixture(file)), null, 2));
