import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin } from '../../core/vars';
import { checkCanMount } from '../device-free';
import { blockDevice, listMounts, normalisePath, resolveMountSource } from '../facts';
import { mountError } from '../mount-errors';
import { mountBody } from '../requests';

export default route({
  method: 'POST',
  path: '/fs/mount',
  permission: 'fs:manage',
  examples: [{ summary: 'mount sdc on /srv/scratch', body: { device: '/dev/sdc', mountpoint: '/srv/scratch' } }],
  summary: 'Mount a block device on a directory (mount -- <device> <mountpoint>); answers a message naming both',
  body: mountBody,
  response: z.string(),
  async handler({ body, system, vars, events }) {
    // resolved by the host (symlinks followed) and refused unless strictly below a mount root
    // (settings.fs.mountRoots) and neither on nor over another area's path (a mount hides the
    // tree): what is mounted on, checked, audited and announced is the real path
    const target = await system.resolvePath(normalisePath(body.mountpoint), 'fs.mount', true, true);
    const dev = await blockDevice(system, vars, await resolveMountSource(system, vars, body.device));
    const verdict = checkCanMount({ device: dev.path, mountpoint: target, mounts: await listMounts(system, vars) });
    if (!verdict.ok) {
      throw new ApiError('conflict', `cannot mount ${body.device} on ${target}: ${verdict.reason}`, {
        details: { reason: verdict.code },
      });
    }
    // The filesystem type is probed by mount (libblkid). A missing mountpoint is mount's own
    // answer ("mount point does not exist"), mapped to 404: asking first would only add a race.
    const argv = [bin(vars, 'mount'), '--', dev.path, target];
    const r = await system.exec(argv);
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw mountError(`cannot mount ${body.device} on ${target}`, r.stderr) ?? commandFailed(argv, r);
    await events.send({ kind: 'fs.filesystem.mounted', data: { device: dev.path, mountpoint: target } });
    return `Mounted ${body.device}${body.device === dev.path || body.device.startsWith('/') ? '' : ` (${dev.path})`} on ${target}`;
  },
});
