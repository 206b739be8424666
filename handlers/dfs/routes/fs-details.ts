import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { devices, lustreMounts } from '../commands';
import { fsResults } from '../filesystems';
import { fsName } from '../names';
import { fsResult } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/fs/:filesystem/details',
  permission: 'dfs:read',
  summary:
    'Space of one Lustre filesystem this node mounts as a client (lfs df --lazy <mount>); 404 when it is not mounted here',
  params: z.object({ filesystem: fsName.describe('filesystem name, e.g. demofs') }),
  response: fsResult,
  examples: [{ summary: 'demofs', params: { filesystem: 'demofs' } }],
  async handler({ params, system, vars }) {
    const mount = (await lustreMounts(system, vars)).find((m) => m.fsname === params.filesystem);
    if (!mount) throw new ApiError('not_found', `${params.filesystem} is not mounted as a client on this node`);
    const dl = await devices(system, vars, true);
    const [r] = await fsResults(system, vars, [mount], dl.lines);
    return r;
  },
});
