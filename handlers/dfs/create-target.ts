import * as z from 'zod';
import { ApiError } from '../core/errors';
import type { RouteExample } from '../core/route';
import { route } from '../core/route';
import { bin } from '../core/vars';
import { devices, exec } from './commands';
import { targetLabel } from './names';
import { parseMkfsLustre } from './parse/mkfs-lustre';
import { createTargetBody } from './requests';
import { mkfsFailure, mountTarget, poolRow } from './targets';

/** create_ost and create_mdt differ only in the role. */
export function createTargetRoute(role: 'ost' | 'mdt', examples: RouteExample[]) {
  const kind = role === 'ost' ? 'OST' : 'MDT';
  return route({
    method: 'POST',
    path: `/dfs/fs/create_${role}`,
    permission: 'dfs:manage',
    long: { budgetS: 600, phases: ['format', 'persist'] },
    summary: `Create an ${kind} on ZFS (mkfs.lustre --${role} --backfstype=zfs --fsname --index --mgsnode -- <pool>/<fsName>-${role}<index>) and start it (mount at <targetMountRoot>/<fs>-${kind}nnnn); persist also writes fstab`,
    body: createTargetBody,
    response: z.object({ result: z.string().describe('mkfs.lustre output'), fsName: z.string(), poolName: z.string() }),
    lock: 'dfs-mount',
    examples,
    async handler({ body, system, vars, events }) {
      await poolRow(system, vars, body.poolName);
      const index = Number(body.index);
      const label = targetLabel(body.fsName, kind, index);
      const d = await devices(system, vars);
      if (d.lines.some((x) => x.name === label)) throw new ApiError('conflict', `this node already serves ${label}`);
      const dataset = `${body.poolName}/${body.fsName}-${role}${index}`;
      const mgsnodes = body.mgs_node.split(':').map((n) => `--mgsnode=${n}`);
      const argv = [
        bin(vars, 'mkfsLustre'),
        `--${role}`,
        '--backfstype=zfs',
        `--fsname=${body.fsName}`,
        `--index=${index}`,
        ...mgsnodes,
        '--',
        dataset,
      ];
      await system.progress({ phase: 'format', step: 1, steps: 2, message: `mkfs.lustre ${dataset}` });
      const r = await exec(system, vars, argv, 'mkfsMs');
      if (r.code !== 0) throw mkfsFailure(argv, r, dataset);
      const made = parseMkfsLustre(r.stdout);
      if (!made.flagNames.includes(kind) || made.index !== index)
        throw new ApiError('bad_gateway', `mkfs.lustre made ${made.target}, not ${label}`);
      await system.progress({ phase: 'persist', step: 2, steps: 2, message: `mounting ${label}` });
      await mountTarget(system, vars, dataset, label, body.persist);
      await events.send({ kind: 'dfs.fs.created', data: { role, fsName: body.fsName, poolName: body.poolName } });
      return { result: r.stdout, fsName: body.fsName, poolName: body.poolName };
    },
  });
}
