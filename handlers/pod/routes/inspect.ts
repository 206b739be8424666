import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { composeArgv, execEnv, podRef, psArgs, requirePod } from '../pod';
import { containerStatusText, parseComposePs } from '../parse/compose-ps';
import { podNameParams } from '../requests';
import { inspectAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/pod/:name/inspect',
  permission: 'pod:read',
  summary:
    "The pod's containers (compose ps, read from JSON, JSON Lines or the 1.x table) and their processes (compose top)",
  params: podNameParams,
  response: inspectAnswer,
  examples: [
    { summary: 'the running web pod', params: { name: 'web' } },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  async handler({ params, system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    await requirePod(system, ref);
    const ps = await system.run(composeArgv(s, ref, psArgs(s)), execEnv(s));
    const containers = parseComposePs(ps.stdout, ref.project);
    const top = containers.some((c) => c.state === 'running' || c.state === 'paused')
      ? await system.run(composeArgv(s, ref, ['top']), execEnv(s))
      : null;
    return {
      name: ref.project,
      container_status: containerStatusText(containers),
      running_processes: top ? top.stdout.trimEnd() : '',
    };
  },
});
