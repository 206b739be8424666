import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { applyCompose, detail, podRef, recipesToMerge, requirePod, serviceStates, unitText } from '../pod';
import { podNameParams, updateBody } from '../requests';
import { podDetailAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/pod/:name/update',
  permission: 'pod:manage',
  long: { budgetS: 1200, phases: ['check', 'write', 'restart'] },
  summary:
    "Replace a pod's compose file (validated like set) and rewrite its unit; a running pod is restarted so the change takes effect, and the old file is put back if that fails",
  params: podNameParams,
  body: updateBody,
  response: podDetailAnswer,
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
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    await requirePod(system, ref);
    const before = (await serviceStates(system, vars, [ref.unit])).get(ref.unit);
    // one host crossing: admitted, both files written with a backup, reloaded, a running pod
    // restarted; on failure (or a kill) both files come back and the pod runs its old file
    const data = await applyCompose(system, {
      mode: 'update',
      project: ref.project,
      fileContents: body.fileContents,
      merge: recipesToMerge(body.recipes, ref.project),
      requireVersion: true,
      unitText: unitText(vars, s, ref),
      restart: before?.state === 'online',
    });
    await events.send({ kind: 'pod.pod.updated', data: { name: ref.project, recipes: body.recipes ?? [] } });
    return detail(system, vars, ref, data);
  },
});
