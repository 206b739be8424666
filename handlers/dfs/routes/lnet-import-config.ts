import * as z from 'zod';
import { route } from '../../core/route';
import { dfsPath, runLnetctl } from '../commands';
import { LNET_IMPORT_FILE } from '../contract';
import { renderLnetYaml } from '../render/lnet-yaml';
import { lnetConfig } from '../requests';

export const LNET_EXAMPLE = {
  net: [
    {
      'net type': 'tcp1',
      'local NI(s)': [
        {
          nid: '10.20.0.11@tcp1',
          status: 'up',
          interfaces: { '0': 'eth2' },
          tunables: { peer_timeout: 180, peer_credits: 8, peer_buffer_credits: 0, credits: 256 },
          CPT: '[0,1]',
        },
      ],
    },
  ],
};

export default route({
  method: 'POST',
  path: '/dfs/lnet/import_config',
  permission: 'dfs:manage',
  summary:
    "Write the configuration as lnetctl YAML to the configured import file and apply it (lnetctl import <file>); answers the file's path",
  body: lnetConfig,
  response: z.string().describe('path of the file holding the imported configuration'),
  lock: 'dfs-lnet',
  examples: [{ summary: 'import tcp1 on eth2', body: LNET_EXAMPLE }],
  async handler({ body, system, vars, events }) {
    const file = `${dfsPath(vars, 'lnetImportDir')}/${LNET_IMPORT_FILE}`;
    const w = await system.writeFile(file, renderLnetYaml(body), { mode: 0o600, backup: true });
    try {
      await runLnetctl(system, vars, ['import', file], 'lnetctl import refused the configuration');
    } catch (e) {
      // the file keeps what was imported last
      if (w.backupPath) await system.restoreFile(file);
      else await system.removeFile(file);
      throw e;
    }
    await events.send({ kind: 'dfs.lnet.config_imported', data: {} });
    return file;
  },
});
