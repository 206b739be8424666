import * as z from 'zod';
import { route } from '../../core/route';
import { devices, lustreMounts } from '../commands';
import { fsResults } from '../filesystems';
import { fsResult } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/fs',
  permission: 'dfs:read',
  summary:
    'Space of every Lustre filesystem this node mounts as a client (lfs df --lazy per mount, bounded by timeouts.lfsDfMs: 504 with the partial output when an OSS hangs it)',
  response: z.array(fsResult),
  examples: [{ summary: 'demofs as the demo node sees it' }],
  async handler({ system, vars }) {
    const mounts = (await lustreMounts(system, vars)).filter((m) => m.fsname);
    if (mounts.length === 0) return [];
    const dl = await devices(system, vars, true);
    return fsResults(system, vars, mounts, dl.lines);
  },
});
