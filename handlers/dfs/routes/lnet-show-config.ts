import * as z from 'zod';
import { route } from '../../core/route';
import { renderLnetYaml } from '../render/lnet-yaml';
import { lnetConfigBody } from '../requests';
import { LNET_EXAMPLE } from './lnet-import-config';

export default route({
  method: 'POST',
  path: '/dfs/lnet/show_config',
  permission: 'dfs:read',
  summary: 'Render a configuration as the YAML lnetctl import reads (nothing is run or written)',
  body: lnetConfigBody,
  response: z.string(),
  examples: [{ summary: 'render tcp1 on eth2', body: LNET_EXAMPLE }],
  async handler({ body }) {
    return renderLnetYaml(body);
  },
});
