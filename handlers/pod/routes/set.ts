import { route } from '../../core/route';
import { ApiError, conflict } from '../../core/errors';
import { bin } from '../../core/vars';
import {
  composeJson,
  detail,
  podExists,
  podRef,
  podSettings,
  recipesToMerge,
  requireConfigured,
  unitText,
  validateCompose,
} from '../pod';
import { PodNameParams, SetBody } from '../requests';
import { PodDetailSchema } from '../schemas';

export default route({
  method: 'POST',
  path: '/pod/:name/set',
  permission: 'pod:manage',
  summary:
    "Create a pod: validate the compose file (Compose Specification + the appliance limits), write it and the pod's systemd unit (disabled, not started)",
  params: PodNameParams,
  body: SetBody,
  response: PodDetailSchema,
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
    const s = podSettings(vars);
    const ref = podRef(vars, s, params.name);
    await requireConfigured(system, vars, s);
    if ((await podExists(system, ref)) || (await system.stat(ref.unitFile)) !== null)
      throw conflict(`pod ${ref.project} already exists`);
    const data = await validateCompose(system, {
      project: ref.project,
      fileContents: body.fileContents,
      merge: recipesToMerge(body.recipes, ref.project),
      requireVersion: true,
      probeHostPorts: true,
    });
    const written: string[] = [];
    try {
      await system.writeFile(ref.composeFile, composeJson(data), { exclusive: true, mode: 0o640 });
      written.push(ref.composeFile);
      await system.writeFile(ref.unitFile, unitText(vars, s, ref), { exclusive: true, mode: 0o644 });
      written.push(ref.unitFile);
      await system.run([bin(vars, 'systemctl'), 'daemon-reload']);
    } catch (e) {
      // nothing half made: a pod is its compose file and its unit, or nothing
      for (const f of written.reverse()) await system.removeFile(f).catch(() => undefined);
      if (e instanceof ApiError && e.status === 409) throw conflict(`pod ${ref.project} already exists`);
      throw e;
    }
    await events.send({ kind: 'pod.created', data: { name: ref.project, recipes: body.recipes ?? [] } });
    return detail(system, vars, ref, data);
  },
});
