import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { networkRecord, parseNetShow } from '../parse/lnetctl';
import { network } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/lnet',
  permission: 'dfs:read',
  summary: 'LNet networks of this node and their local NIs (lnetctl net show)',
  response: z.array(network),
  examples: [{ summary: 'the demo node: lo and tcp on eth1' }],
  async handler({ system, vars }) {
    const r = await runLnetctl(system, vars, ['net', 'show'], 'cannot list LNet networks');
    return parseNetShow(r.stdout).networks.map(networkRecord);
  },
});
