import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parseNetShow } from '../parse/lnetctl';
import { lnetChangeBody } from '../requests';

/** Answers every network of the node after the change, as remove does (README, decisions). */
export default route({
  method: 'POST',
  path: '/dfs/lnet/add',
  permission: 'dfs:manage',
  summary:
    'Add an LNet network on a physical interface (lnetctl net add --net <lnetName> --if <faceName>); answers lnetctl net show (every network, as remove does)',
  body: lnetChangeBody,
  response: z.object({
    result: z.string().describe('lnetctl net show after the change: every network of this node'),
    lnetName: z.string(),
    faceName: z.string(),
  }),
  lock: 'dfs-lnet',
  examples: [
    {
      summary: 'tcp1 on eth2',
      body: { lnetName: 'tcp1', faceName: 'eth2' },
      then: [
        {
          method: 'GET',
          path: '/dfs/lnet',
          shows: [{ net_type: 'tcp1', local_ni_s: [{ nid: '10.20.0.11@tcp1', interfaces: { '0': 'eth2' } }] }],
        },
      ],
    },
  ],
  async handler({ body, system, vars, events }) {
    await runLnetctl(
      system,
      vars,
      ['net', 'add', '--net', body.lnetName, '--if', body.faceName],
      `cannot add ${body.lnetName} on ${body.faceName}`,
    );
    await events.send({ kind: 'dfs.lnet.added', data: { lnetName: body.lnetName, faceName: body.faceName } });
    // the spec's "current network information": the whole of it, the same answer remove gives
    const show = await runLnetctl(system, vars, ['net', 'show'], 'cannot list LNet networks');
    parseNetShow(show.stdout);
    return { result: show.stdout, lnetName: body.lnetName, faceName: body.faceName };
  },
});
