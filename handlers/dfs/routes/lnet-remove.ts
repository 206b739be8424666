import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';
import { parseNetShow } from '../parse/lnetctl';
import { lnetChangeBody } from '../requests';

/**
 * The spec shows no method for this route: POST, like every other change (README). Answers every
 * network of the node after the change, as add does.
 */
export default route({
  method: 'POST',
  path: '/dfs/lnet/remove',
  permission: 'dfs:manage',
  summary:
    'Remove an LNet network from an interface (lnetctl net del --net <lnetName> --if <faceName>); answers lnetctl net show. POST: the spec leaves the method open',
  body: lnetChangeBody,
  response: z.object({
    result: z.string().describe('lnetctl net show after the change'),
    lnetName: z.string(),
    faceName: z.string(),
  }),
  lock: 'dfs-lnet',
  examples: [
    {
      summary: 'remove tcp1 from eth2, once the add example put it there',
      body: { lnetName: 'tcp1', faceName: 'eth2' },
      before: [{ method: 'POST', path: '/dfs/lnet/add', body: { lnetName: 'tcp1', faceName: 'eth2' } }],
    },
  ],
  async handler({ body, system, vars, events }) {
    await runLnetctl(
      system,
      vars,
      ['net', 'del', '--net', body.lnetName, '--if', body.faceName],
      `cannot remove ${body.lnetName} from ${body.faceName}`,
    );
    await events.send({ kind: 'dfs.lnet.removed', data: { lnetName: body.lnetName, faceName: body.faceName } });
    const show = await runLnetctl(system, vars, ['net', 'show'], 'cannot list LNet networks');
    parseNetShow(show.stdout);
    return { result: show.stdout, lnetName: body.lnetName, faceName: body.faceName };
  },
});
