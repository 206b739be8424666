import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { bin } from '../../core/vars';
import { dfsPath, exec, lustreMounts, makeMountPoint, persistMount, run } from '../commands';
import { fsMountBody } from '../requests';

export default route({
  method: 'POST',
  path: '/dfs/fs/mount',
  permission: 'dfs:manage',
  long: { budgetS: 300, phases: ['mount'] },
  summary:
    'Mount a Lustre filesystem as a client at <clientMountRoot>/<fsName> (mount -t lustre -- <lnetId>:/<fsName> <dir>); persist also writes fstab',
  body: fsMountBody,
  response: z.object({ result: z.string(), fsName: z.string(), lnetId: z.string(), mountLocation: z.string() }),
  lock: 'dfs-mount',
  examples: [
    {
      summary: 'mount the scratch filesystem of another MGS, persistently',
      body: { fsName: 'scratch', lnetId: '10.10.0.31@tcp', persist: true },
    },
  ],
  async handler({ body, system, vars, events }) {
    const existing = (await lustreMounts(system, vars)).find((m) => m.fsname === body.fsName);
    if (existing) throw new ApiError('conflict', `${body.fsName} is already mounted at ${existing.mountpoint}`);
    const dir = `${dfsPath(vars, 'clientMountRoot')}/${body.fsName}`;
    const spec = `${body.lnetId}:/${body.fsName}`;
    await makeMountPoint(system, vars, dir);
    await run(system, vars, [bin(vars, 'mount'), '-t', 'lustre', '--', spec, dir], 'mountMs');
    let persisted = false;
    if (body.persist) {
      try {
        persisted = await persistMount(system, vars, spec, dir);
      } catch (e) {
        await exec(system, vars, [bin(vars, 'umount'), '--', dir], 'mountMs').catch(() => undefined);
        throw e;
      }
    }
    await events.send({
      kind: 'dfs.fs.mounted',
      data: { fsName: body.fsName, lnetId: body.lnetId, persist: body.persist },
    });
    const note = body.persist
      ? persisted
        ? ` and added it to ${dfsPath(vars, 'fstab')}`
        : ` (${dfsPath(vars, 'fstab')} already had it)`
      : '';
    return { result: `Mounted ${spec} on ${dir}${note}`, fsName: body.fsName, lnetId: body.lnetId, mountLocation: dir };
  },
});
