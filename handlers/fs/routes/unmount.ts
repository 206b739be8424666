import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { checkCanUnmount } from '../device-free';
import { blockDevice, listMounts, normalisePath, pathExists } from '../facts';
import { mountError } from '../mount-errors';
import { unmountBody } from '../requests';

export default route({
  method: 'POST',
  path: '/fs/unmount',
  permission: 'fs:manage',
  examples: [{ summary: 'unmount /srv/data', body: { mountpoint: '/srv/data' } }],
  summary:
    'Unmount the filesystem on a mountpoint (umount -- <mountpoint>); answers a message naming device and mountpoint',
  body: unmountBody,
  response: z.string(),
  async handler({ body, system, vars, events }) {
    // only strictly below a mount root (settings.fs.mountRoots), as the host resolves it
    const target = await system.resolvePath(normalisePath(body.mountpoint), 'fs.mount', true, true);
    // a given device is compared as findmnt names it: resolve /dev/disk/by-* links first
    const device = body.device === undefined ? undefined : (await blockDevice(system, vars, body.device)).path;
    const mounts = await listMounts(system, vars);
    const verdict = checkCanUnmount({ mountpoint: target, device, mounts });
    if (!verdict.ok) {
      if (verdict.code === 'not-mounted' && !(await pathExists(system, vars, target))) {
        throw new ApiError('not_found', `${target} does not exist`);
      }
      throw new ApiError('conflict', `cannot unmount ${target}: ${verdict.reason}`, {
        details: { reason: verdict.code },
      });
    }
    // the filesystem visible there (the last one stacked on the target); named in the answer
    // and the event even when the request did not say which device it expected
    const onTarget = mounts.filter((m) => m.target === target);
    const mounted = onTarget[onTarget.length - 1].sourceDevice;

    const argv = [bin(vars, 'umount'), '--', target];
    const r = await system.exec(argv);
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw mountError(`cannot unmount ${target}`, r.stderr) ?? commandFailed(argv, r);
    await events.send({ kind: 'fs.filesystem.unmounted', data: { device: mounted, mountpoint: target } });
    return `Unmounted ${body.device ?? mounted} from ${target}`;
  },
});
