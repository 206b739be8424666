import * as z from 'zod';
import { route } from '../../core/route';
import { containerAction } from '../pod';
import { podNameParams } from '../requests';

export default route({
  method: 'POST',
  path: '/pod/:name/kill',
  permission: 'pod:manage',
  summary:
    "Kill the pod's containers (compose kill, SIGKILL; the unit stays started in systemd); answers the tool's output as a JSON string",
  params: podNameParams,
  response: z.string(),
  lock: 'pod',
  examples: [
    { summary: 'kill the web pod', params: { name: 'web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  handler: (c) => containerAction(c, 'kill', 'pod.pod.killed'),
});
