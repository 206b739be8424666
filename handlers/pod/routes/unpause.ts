import * as z from 'zod';
import { route } from '../../core/route';
import { containerAction } from '../pod';
import { podNameParams } from '../requests';

export default route({
  method: 'POST',
  path: '/pod/:name/unpause',
  permission: 'pod:manage',
  summary: "Unpause the pod's containers (compose unpause); answers the tool's output as a JSON string",
  params: podNameParams,
  response: z.string(),
  lock: 'pod',
  examples: [
    { summary: 'unpause the web pod', params: { name: 'web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  handler: (c) => containerAction(c, 'unpause', 'pod.pod.unpaused'),
});
