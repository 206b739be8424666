import { route } from '../../core/route';
import { path } from '../../core/vars';
import { mountOptions, readDaemonJson } from '../config-fs';
import { podDataEntry, podSettings } from '../pod';
import { PodConfigSchema } from '../schemas';

export default route({
  method: 'GET',
  path: '/pod/config',
  permission: 'pod:read',
  summary:
    "The container system configuration: the engine's daemon.json and the fstab entry of the pod data mount location (absent when there is none)",
  response: PodConfigSchema,
  examples: [{ summary: "the demo's configured engine" }],
  async handler({ system, vars }) {
    const s = podSettings(vars);
    const daemonJson = await readDaemonJson(system, path(vars, 'dockerDaemonJson'));
    const e = await podDataEntry(system, vars, s);
    if (!e) return { daemonJson };
    return {
      daemonJson,
      podDataMount: {
        source: e.fs_spec,
        mountpoint: e.fs_file,
        type: e.fs_vfstype,
        options: mountOptions(e.fs_mntops),
        fs_freq: e.fs_freq,
        fs_passno: e.fs_passno,
      },
    };
  },
});
