import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed } from '../../core/system';
import { bin } from '../../core/vars';
import { exec, run } from '../commands';
import { parseZfsList, parseZpoolStatus } from '../parse/zfs';
import { fsVerifyBody } from '../requests';
import { poolRow } from '../targets';

export default route({
  method: 'POST',
  path: '/dfs/fs/verify',
  permission: 'dfs:read',
  long: { budgetS: 300, phases: ['verify'] },
  summary:
    "Check a target's ZFS backend: the pool (zpool list, zpool status) and the dataset <poolName>/<fsName> (zfs list); answers a one-paragraph verdict",
  body: fsVerifyBody,
  response: z.object({ result: z.string(), fsName: z.string(), poolName: z.string() }),
  examples: [{ summary: 'the demo MDT dataset', body: { fsName: 'demofs-mdt0', poolName: 'mdtpool' } }],
  async handler({ body, system, vars }) {
    const pool = await poolRow(system, vars, body.poolName);
    const st = parseZpoolStatus(
      (await run(system, vars, [bin(vars, 'zpool'), 'status', '--', body.poolName], 'zfsMs')).stdout,
    ).find((p) => p.pool === body.poolName);
    if (!st) throw new ApiError('bad_gateway', `zpool status did not describe ${body.poolName}`);
    const dataset = `${body.poolName}/${body.fsName}`;
    const argv = [bin(vars, 'zfs'), 'list', '--', dataset];
    const z1 = await exec(system, vars, argv, 'zfsMs');
    if (z1.code !== 0) {
      if (/does not exist/.test(z1.stderr))
        throw new ApiError('not_found', `no dataset ${dataset} (pool ${body.poolName} is ${st.state})`);
      throw commandFailed(argv, z1);
    }
    const ds = parseZfsList(z1.stdout).find((x) => x.name === dataset);
    if (!ds) throw new ApiError('bad_gateway', `zfs list did not list ${dataset}`);
    const bad = st.config
      .filter((v) => v.state && v.state !== 'ONLINE' && v.state !== 'AVAIL')
      .map((v) => `${v.name} ${v.state}${v.note ? ` (${v.note})` : ''}`);
    const lines = [
      `pool ${body.poolName}: ${st.state}, size ${pool.size}, allocated ${pool.alloc}, free ${pool.free}${pool.cap ? `, ${pool.cap} used` : ''}`,
      bad.length ? `devices not online: ${bad.join(', ')}` : 'all devices online',
      st.errors ? `errors: ${st.errors}` : undefined,
      `dataset ${dataset}: used ${ds.used}, available ${ds.avail}`,
    ].filter(Boolean);
    return { result: lines.join('\n'), fsName: body.fsName, poolName: body.poolName };
  },
});
