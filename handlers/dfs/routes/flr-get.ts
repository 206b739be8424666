import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { dfsPath } from '../commands';
import { parseFlrConfig } from '../flr';
import { flrConfig } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/flr/get',
  permission: 'dfs:read',
  summary:
    'The FLR synchronisation configuration (max_history_size, run_interval, directories); 404 when none was written',
  response: flrConfig,
  examples: [{ summary: "the demo node's configuration" }],
  async handler({ system, vars }) {
    const file = dfsPath(vars, 'flrConfig');
    const text = await system.readFile(file);
    if (text === null)
      throw new ApiError(
        'not_found',
        `no FLR synchronisation configuration (${file} does not exist); POST /dfs/flr/update writes one`,
      );
    return parseFlrConfig(text);
  },
});
