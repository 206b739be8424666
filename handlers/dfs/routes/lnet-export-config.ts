import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parseExport } from '../parse/lnetctl';

export default route({
  method: 'GET',
  path: '/dfs/lnet/export_config',
  permission: 'dfs:read',
  summary: 'The current LNet configuration (lnetctl export), unparsed YAML text',
  response: z.string(),
  examples: [{ summary: "the demo node's LNet configuration" }],
  async handler({ system, vars }) {
    const r = await runLnetctl(system, vars, ['export'], 'cannot export the LNet configuration');
    parseExport(r.stdout);
    return r.stdout;
  },
});
