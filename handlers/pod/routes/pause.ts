import * as z from 'zod';
import { route } from '../../core/route';
import { commandFailed } from '../../core/system';
import { composeArgv, execEnv, outputOf, podRef, podSettings, requirePod } from '../pod';
import { PodNameParams } from '../requests';

export default route({
  method: 'POST',
  path: '/pod/:name/pause',
  permission: 'pod:manage',
  summary: "Pause the pod's containers (compose pause); answers the tool's output as a JSON string",
  params: PodNameParams,
  response: z.string(),
  lock: 'pod',
  examples: [
    { summary: 'pause the web pod', params: { name: 'web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  async handler({ params, system, vars, events }) {
    const s = podSettings(vars);
    const ref = podRef(vars, s, params.name);
    await requirePod(system, ref);
    const argv = composeArgv(s, ref, ['pause']);
    const r = await system.exec(argv, { timeoutMs: s.composeTimeoutMs, ...execEnv(s) });
    if (r.timedOut || r.code !== 0) throw commandFailed(argv, r);
    await events.send({ kind: 'pod.paused', data: { name: ref.project } });
    return outputOf(r);
  },
});
