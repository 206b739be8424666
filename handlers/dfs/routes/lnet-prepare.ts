import * as z from 'zod';
import { route } from '../../core/route';
import { runLnetctl } from '../commands';

export default route({
  method: 'GET',
  path: '/dfs/lnet/prepare',
  permission: 'dfs:manage',
  summary: 'Configure LNet from the lnet module parameters (lnetctl lnet configure --all); answers an empty string',
  response: z.string(),
  sideEffects: true,
  lock: 'dfs-lnet',
  examples: [{ summary: 'bring LNet up from the module parameters' }],
  async handler({ system, vars }) {
    await runLnetctl(system, vars, ['lnet', 'configure', '--all'], 'cannot configure LNet');
    return '';
  },
});
