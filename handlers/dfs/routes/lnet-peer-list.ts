import * as z from 'zod';
import { queryBoolean } from '../../core/schemas';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parsePeerShow } from '../parse/lnetctl';
import { peer } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/lnet/peer_list',
  permission: 'dfs:read',
  summary: 'LNet peers this node knows (lnetctl peer show [-v])',
  query: z.object({
    verbose: queryBoolean.optional().describe('per-NI credits and statistics (lnetctl peer show -v)'),
  }),
  response: z.array(peer),
  examples: [{ summary: 'peers of the demo node' }, { summary: 'with per-NI detail', query: { verbose: 'true' } }],
  async handler({ query, system, vars }) {
    const r = await runLnetctl(
      system,
      vars,
      query.verbose ? ['peer', 'show', '-v'] : ['peer', 'show'],
      'cannot list LNet peers',
    );
    return parsePeerShow(r.stdout).peers;
  },
});
