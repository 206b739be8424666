import { route } from '../../core/route';
import { bin } from '../../core/vars';
import {
  composeJson,
  detail,
  podRef,
  podSettings,
  recipesToMerge,
  requirePod,
  serviceStates,
  unitText,
  validateCompose,
} from '../pod';
import { PodNameParams, UpdateBody } from '../requests';
import { PodDetailSchema } from '../schemas';

export default route({
  method: 'POST',
  path: '/pod/:name/update',
  permission: 'pod:manage',
  summary:
    "Replace a pod's compose file (validated like set) and rewrite its unit; a running pod is restarted so the change takes effect, and the old file is put back if that fails",
  params: PodNameParams,
  body: UpdateBody,
  response: PodDetailSchema,
  lock: 'pod',
  examples: [
    {
      summary: 'add the metrics exporter to the disabled pod',
      params: { name: 'backup' },
      body: {
        fileContents: {
          version: '3.8',
          services: {
            rsync: {
              image: 'busybox:1.36',
              command: ['sleep', 'infinity'],
              volumes: ['./data:/data'],
              restart: 'unless-stopped',
            },
          },
        },
        recipes: ['metrics-exporter'],
      },
    },
    {
      summary: 'an unknown pod',
      params: { name: 'nosuchpod' },
      body: { fileContents: { version: '3.8', services: { a: { image: 'busybox:1.36' } } } },
      status: 404,
    },
  ],
  async handler({ params, body, system, vars, events }) {
    const s = podSettings(vars);
    const ref = podRef(vars, s, params.name);
    await requirePod(system, ref);
    const data = await validateCompose(system, {
      project: ref.project,
      fileContents: body.fileContents,
      merge: recipesToMerge(body.recipes, ref.project),
      ignoreOwnPorts: true,
      requireVersion: true,
      probeHostPorts: true,
    });
    const systemctl = bin(vars, 'systemctl');
    const before = (await serviceStates(system, vars, [ref.unit])).get(ref.unit);
    await system.writeFile(ref.composeFile, composeJson(data), { backup: true, mode: 0o640 });
    await system.writeFile(ref.unitFile, unitText(vars, s, ref), { backup: true, mode: 0o644 });
    try {
      await system.run([systemctl, 'daemon-reload']);
      if (before?.state === 'online')
        await system.run([systemctl, 'restart', '--', ref.unit], { timeoutMs: s.composeTimeoutMs });
    } catch (e) {
      await system.restoreFile(ref.composeFile);
      await system.restoreFile(ref.unitFile);
      await system.exec([systemctl, 'daemon-reload']);
      if (before?.state === 'online')
        await system.exec([systemctl, 'restart', '--', ref.unit], { timeoutMs: s.composeTimeoutMs });
      throw e;
    }
    await events.send({ kind: 'pod.updated', data: { name: ref.project, recipes: body.recipes ?? [] } });
    return detail(system, vars, ref, data);
  },
});
