import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parseGlobalShow } from '../parse/lnetctl';

export default route({
  method: 'GET',
  path: '/dfs/lnet/properties',
  permission: 'dfs:read',
  summary: 'LNet global settings (lnetctl global show), unparsed YAML text',
  response: z.string(),
  examples: [{ summary: 'global settings of the demo node' }],
  async handler({ system, vars }) {
    const r = await runLnetctl(system, vars, ['global', 'show'], 'cannot read LNet global settings');
    parseGlobalShow(r.stdout);
    return r.stdout;
  },
});
