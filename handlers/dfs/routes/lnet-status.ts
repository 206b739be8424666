import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parseStatsShow } from '../parse/lnetctl';

export default route({
  method: 'GET',
  path: '/dfs/lnet/status',
  permission: 'dfs:read',
  summary:
    'LNet operational status: the counters of lnetctl stats show, as the YAML text lnetctl printed (checked, not reshaped)',
  response: z.string(),
  examples: [{ summary: 'message counters of the demo node' }],
  async handler({ system, vars }) {
    const r = await runLnetctl(system, vars, ['stats', 'show'], 'cannot read LNet status');
    parseStatsShow(r.stdout); // a 502 rather than passing on something that is not the counters
    return r.stdout;
  },
});
