import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { path } from '../../core/vars';
import { COMPOSE_FILE_NAME, podSettings } from '../contract';
import { serviceStates } from '../pod';
import { listAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/pod',
  permission: 'pod:read',
  summary:
    'The pods (directories `<prefix>-pod-<name>` under paths.podFiles holding a compose file), each with its systemd service state',
  response: listAnswer,
  examples: [{ summary: 'the demo has one online and one disabled pod' }],
  async handler({ system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const root = path(vars, 'podFiles');
    const entries = (await system.listDir(root)) ?? [];
    const head = `${s.prefix}-pod-`;
    const names: string[] = [];
    for (const e of entries) {
      if (e.type !== 'dir' || !e.name.startsWith(head) || e.name.length === head.length) continue;
      if ((await system.stat(`${root}/${e.name}/${COMPOSE_FILE_NAME}`))?.type === 'file') names.push(e.name);
    }
    const states = await serviceStates(
      system,
      vars,
      names.map((n) => `${n}.service`),
      { containers: true },
    );
    return names.map((n) => {
      const st = states.get(`${n}.service`);
      return { name: n, service: st ?? { id: `${n}.service`, state: 'disabled' as const, locked: false } };
    });
  },
});
