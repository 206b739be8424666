import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { bin } from '../../core/vars';
import { devices, exec, run } from '../commands';
import { parseMkfsLustre } from '../parse/mkfs-lustre';
import { createMgsBody } from '../requests';
import { mkfsFailure, mountTarget, poolRow, targetMountOf } from '../targets';

export default route({
  method: 'POST',
  path: '/dfs/fs/create_mgs',
  permission: 'dfs:manage',
  long: { budgetS: 600, phases: ['format', 'persist'] },
  summary:
    'Create the management target on ZFS (mkfs.lustre --mgs --backfstype=zfs [--reformat] -- <pool>/mgs) and start it (mount at <targetMountRoot>/MGS); persist also writes fstab',
  body: createMgsBody,
  response: z.object({ result: z.string().describe('mkfs.lustre output'), poolName: z.string() }),
  lock: 'dfs-mount',
  examples: [
    {
      summary: "reformat the demo node's MGT (its MGS is stopped first)",
      body: { poolName: 'mgspool', persist: false, reformat: true },
    },
  ],
  async handler({ body, system, vars, events }) {
    await poolRow(system, vars, body.poolName);
    const dataset = `${body.poolName}/mgs`;
    const d = await devices(system, vars);
    if (d.lines.some((x) => x.type === 'mgs') && !body.reformat) {
      throw new ApiError(
        'conflict',
        'this node already runs a management server; reformat: true replaces it and every device relying on it',
      );
    }
    const mounted = await targetMountOf(system, vars, dataset);
    if (mounted) {
      if (!body.reformat)
        throw new ApiError('conflict', `${dataset} is mounted at ${mounted}; reformat: true replaces it`);
      await run(system, vars, [bin(vars, 'umount'), '--', mounted], 'mountMs');
    }
    const argv = [
      bin(vars, 'mkfsLustre'),
      '--mgs',
      '--backfstype=zfs',
      ...(body.reformat ? ['--reformat'] : []),
      '--',
      dataset,
    ];
    const r = await exec(system, vars, argv, 'mkfsMs');
    if (r.code !== 0) throw mkfsFailure(argv, r, dataset);
    const made = parseMkfsLustre(r.stdout);
    if (made.target !== 'MGS' || !made.flagNames.includes('MGS'))
      throw new ApiError('bad_gateway', `mkfs.lustre made ${made.target}, not an MGS`);
    await mountTarget(system, vars, dataset, 'MGS', body.persist);
    await events.send({ kind: 'dfs.fs.created', data: { role: 'mgs', fsName: null, poolName: body.poolName } });
    return { result: r.stdout, poolName: body.poolName };
  },
});
