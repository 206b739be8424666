import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { detail, podRef, requirePod } from '../pod';
import { podNameParams } from '../requests';
import { podDetailAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/pod/:name/details',
  permission: 'pod:read',
  summary: 'One pod: its compose file and its systemd service',
  params: podNameParams,
  response: podDetailAnswer,
  examples: [
    { summary: 'the online web pod', params: { name: 'web' } },
    { summary: 'the same pod by its full name', params: { name: 'ballast-pod-web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  async handler({ params, system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    const compose = await requirePod(system, ref);
    return detail(system, vars, ref, compose);
  },
});
