/**
 * Every recorded ip/ethtool invocation under fixtures/ against its reviewed expected parse (the
 * table in ../fixture-tables.ts, run by the one runner). A fixture whose command failed (code != 0)
 * must make the parser throw a ParseError at the line its expected file names: the route looks
 * at the exit code first, and a parser handed that output by mistake must not invent an empty
 * success.
 */
import { runFixtureTable } from '../../helpers/fixture-runner';
import { NETWORK_FIXTURES } from '../fixture-tables';

runFixtureTable(NETWORK_FIXTURES);
