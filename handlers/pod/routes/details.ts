import { route } from '../../core/route';
import { detail, podRef, podSettings, requirePod } from '../pod';
import { PodNameParams } from '../requests';
import { PodDetailSchema } from '../schemas';

export default route({
  method: 'GET',
  path: '/pod/:name/details',
  permission: 'pod:read',
  summary: 'One pod: its compose file and its systemd service',
  params: PodNameParams,
  response: PodDetailSchema,
  examples: [
    { summary: 'the online web pod', params: { name: 'web' } },
    { summary: 'the same pod by its full name', params: { name: 'ballast-pod-web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  async handler({ params, system, vars }) {
    const s = podSettings(vars);
    const ref = podRef(vars, s, params.name);
    const compose = await requirePod(system, ref);
    return detail(system, vars, ref, compose);
  },
});
