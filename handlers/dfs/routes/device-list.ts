import { route } from '../../core/route';
import { devices } from '../commands';
import { deviceRecords, deviceWarnings } from '../devices';
import { deviceList } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/device',
  permission: 'dfs:read',
  summary:
    'Lustre devices of this node (lctl dl -t): what this node serves or mounts — an MGS, MDS, OSS and client each see their own',
  response: deviceList,
  examples: [{ summary: 'the devices of the demo MGS+MDS node (also a client of demofs)' }],
  async handler({ system, vars }) {
    const d = await devices(system, vars, true);
    return { warnings: deviceWarnings(d.lines, d.stderr), raw: d.raw, parsed: deviceRecords(d.lines) };
  },
});
