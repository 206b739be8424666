import * as z from 'zod';
import { route } from '../../core/route';
import { containerAction } from '../pod';
import { podNameParams } from '../requests';

export default route({
  method: 'POST',
  path: '/pod/:name/pause',
  permission: 'pod:manage',
  summary: "Pause the pod's containers (compose pause); answers the tool's output as a JSON string",
  params: podNameParams,
  response: z.string(),
  lock: 'pod',
  examples: [
    { summary: 'pause the web pod', params: { name: 'web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  handler: (c) => containerAction(c, 'pause', 'pod.pod.paused'),
});
