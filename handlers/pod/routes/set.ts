import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { applyCompose, detail, podRef, recipesToMerge, requireConfigured, unitText } from '../pod';
import { podNameParams, setBody } from '../requests';
import { podDetailAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/pod/:name/set',
  permission: 'pod:manage',
  long: { budgetS: 1200, phases: ['check', 'write'] },
  summary:
    "Create a pod: validate the compose file (Compose Specification + the appliance limits), write it and the pod's systemd unit (disabled, not started)",
  params: podNameParams,
  body: setBody,
  response: podDetailAnswer,
  lock: 'pod',
  examples: [
    {
      summary: 'a pod from the web-server recipe plus a small sidecar',
      params: { name: 'site' },
      body: {
        fileContents: {
          version: '3.8',
          services: { sidecar: { image: 'busybox:1.36', command: ['sleep', 'infinity'], restart: 'unless-stopped' } },
        },
        recipes: ['web-server'],
      },
      then: [{ method: 'GET', path: '/pod', shows: [{ name: 'ballast-pod-site' }] }],
    },
    {
      summary: 'an existing pod',
      params: { name: 'web' },
      body: { fileContents: { version: '3.8', services: { a: { image: 'busybox:1.36' } } } },
      status: 409,
    },
    {
      summary: 'a privileged service is refused',
      params: { name: 'bad' },
      body: { fileContents: { version: '3.8', services: { a: { image: 'busybox:1.36', privileged: true } } } },
      status: 400,
    },
  ],
  async handler({ params, body, system, vars, events }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    await requireConfigured(system, vars, s);
    // one host crossing: admitted, both files written (exclusive), systemd reloaded, journaled
    const data = await applyCompose(system, {
      mode: 'create',
      project: ref.project,
      fileContents: body.fileContents,
      merge: recipesToMerge(body.recipes, ref.project),
      requireVersion: true,
      unitText: unitText(vars, s, ref),
    });
    await events.send({ kind: 'pod.pod.created', data: { name: ref.project, recipes: body.recipes ?? [] } });
    return detail(system, vars, ref, data);
  },
});
