import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { path } from '../../core/vars';
import { mountOptionsOf, readDaemonJson } from '../config-fs';
import { podDataEntry } from '../pod';
import { configAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/pod/config',
  permission: 'pod:read',
  summary:
    "The container system configuration: the engine's daemon.json and the fstab entry of the pod data mount location (absent when there is none)",
  response: configAnswer,
  examples: [{ summary: "the demo's configured engine" }],
  async handler({ system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const daemonJson = await readDaemonJson(system, path(vars, 'dockerDaemonJson'));
    const e = await podDataEntry(system, vars, s);
    if (!e) return { daemonJson };
    return {
      daemonJson,
      podDataMount: {
        source: e.fs_spec,
        mountpoint: e.fs_file,
        type: e.fs_vfstype,
        options: mountOptionsOf(e.fs_mntops),
        fs_freq: e.fs_freq,
        fs_passno: e.fs_passno,
      },
    };
  },
});
