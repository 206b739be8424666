import * as z from 'zod';
import { route } from '../../core/route';
import { dfsPath, runLnetctl } from '../commands';
import { LNET_IMPORT_FILE } from '../contract';
import { renderLnetYaml } from '../render/lnet-yaml';
import { lnetConfigBody } from '../requests';

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

/**
 * The spec answers "the path of the temporary file holding the configuration": the file exists
 * only while lnetctl reads it (one at a time: the route's lock) and is removed afterwards, whether
 * the import worked or not. What is in effect is GET /dfs/lnet/export_config, not this file.
 */
export default route({
  method: 'POST',
  path: '/dfs/lnet/import_config',
  permission: 'dfs:manage',
  summary:
    'Write the configuration as lnetctl YAML to a temporary file, apply it (lnetctl import <file>) and remove the file; answers the path it was imported from',
  body: lnetConfigBody,
  response: z.string().describe('path of the temporary file lnetctl imported (removed once the import is done)'),
  lock: 'dfs-lnet',
  examples: [{ summary: 'import tcp1 on eth2', body: LNET_EXAMPLE }],
  async handler({ body, system, vars, events }) {
    const file = `${dfsPath(vars, 'lnetImportDir')}/${LNET_IMPORT_FILE}`;
    await system.writeFile(file, renderLnetYaml(body), { mode: 0o600 });
    try {
      await runLnetctl(system, vars, ['import', file], 'lnetctl import refused the configuration');
    } finally {
      await system.removeFile(file);
    }
    await events.send({ kind: 'dfs.lnet.config_imported', data: {} });
    return file;
  },
});
