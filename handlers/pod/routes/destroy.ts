import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { notFound } from '../../core/errors';
import { commandFailed, failureOf } from '../../core/system';
import { bin } from '../../core/vars';
import { REMOVE_OP, type RemoveResult, podSettings } from '../contract';
import { composeArgv, execEnv, outputOf, podExists, podRef } from '../pod';
import { podNameParams } from '../requests';
import { destroyAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/pod/:name/destroy',
  permission: 'pod:manage',
  long: { budgetS: 1200, phases: ['stop', 'remove'] },
  summary:
    "Stop and disable the pod's unit, `compose down` its containers and network, remove the unit file and the pod directory",
  params: podNameParams,
  response: destroyAnswer,
  lock: 'pod',
  examples: [
    {
      summary: 'destroy the disabled pod',
      params: { name: 'backup' },
      then: [{ method: 'GET', path: '/pod/backup/details', status: 404, shows: { error: { code: 'not_found' } } }],
    },
    { summary: 'an unknown pod', params: { name: 'nosuchpod' }, status: 404 },
  ],
  async handler({ params, system, vars, events }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    const hasUnit = (await system.stat(ref.unitFile)) !== null;
    if (!(await podExists(system, ref)) && !hasUnit) {
      throw notFound(`pod ${ref.project} does not exist`);
    }
    const systemctl = bin(vars, 'systemctl');
    // compose down first: when it fails nothing has changed yet (the unit still runs and is
    // enabled as it was), so the 502 says the whole pod was kept
    let containerResponse = '';
    if (await podExists(system, ref)) {
      const argv = composeArgv(s, ref, ['down', '--remove-orphans']);
      await system.progress({ phase: 'stop', message: `docker compose down for ${ref.project}` });
      const down = await system.exec(argv, { timeoutMs: s.composeTimeoutMs, ...execEnv(s) });
      if (down.code !== 0) {
        const { cause } = failureOf(down);
        throw commandFailed(
          argv,
          down,
          `compose down of ${ref.project} failed (exit ${down.code}); the pod was kept as it was${cause ? `: ${cause}` : ''}`,
        );
      }
      containerResponse = outputOf(down);
    }
    // stop runs the unit's ExecStop (compose down again: nothing left); a unit systemd never loaded answers 5
    const stop = await system.exec([systemctl, 'stop', '--', ref.unit], { timeoutMs: s.composeTimeoutMs });
    const disable = await system.exec([systemctl, 'disable', '--', ref.unit]);
    const unitRemoved = (await system.removeFile(ref.unitFile)).removed;
    await system.progress({ phase: 'remove', message: `removing the files of ${ref.project}` });
    const files = await system.op<RemoveResult>(REMOVE_OP, { project: ref.project });
    await system.run([systemctl, 'daemon-reload']);
    await events.send({ kind: 'pod.pod.destroyed', data: { name: ref.project, recipes: [] } });
    return {
      containerResponse,
      serviceResponse: {
        id: ref.unit,
        stopped: stop.code === 0,
        disabled: disable.code === 0,
        unitFileRemoved: unitRemoved,
        podFilesRemoved: files.removed,
      },
    };
  },
});
