import * as z from 'zod';
import { ApiError, badRequest, conflict } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { bin, path } from '../../core/vars';
import { availableFilesystems } from '../available-fs';
import { checkDeviceFree } from '../device-free';
import { blockDevice, listMounts, signaturesOf } from '../facts';
import { checkMkfsOptions } from '../mkfs-options';
import { makeFilesystemBody } from '../requests';
import { renderTerminalText } from '../terminal-text';

/** mkfs with discard on a large disk takes minutes; the host caps this at 10x its command limit. */
const MKFS_TIMEOUT_MS = 600_000;

/**
 * Refusal codes of device-free.ts and the status each one answers: only "there is no such
 * block device" is a 404; everything else is the device's state (409).
 */
const NOT_FOUND_CODES = new Set(['not-a-block-device']);

/**
 * Sizes below which a type's mkfs refuses (xfsprogs 5.19+: 300 MB; btrfs-progs: 109 MiB for the
 * default profile). Checked before anything is written, so a forced request never ends with a
 * wiped device and a failed mkfs.
 */
const MIN_BYTES: Partial<Record<string, number>> = { xfs: 300_000_000, btrfs: 109 * 1024 * 1024 };

/**
 * With `force`, the type's own flag to overwrite an existing signature: the tool checks
 * everything else first and writes nothing when it refuses (unlike wiping first, which would lose
 * the old filesystem whenever mkfs then fails). mkfs.vfat does not look for signatures.
 */
const FORCE_FLAG: Partial<Record<string, string>> = { ext2: '-F', ext3: '-F', ext4: '-F', xfs: '-f', btrfs: '-f' };

export default route({
  method: 'POST',
  path: '/fs/make_filesystem',
  permission: 'fs:manage',
  long: { budgetS: 600, phases: ['probe', 'write'] },
  examples: [
    { summary: 'ext4 on the blank disk sdc', body: { device: '/dev/sdc', type: 'ext4' } },
    { summary: 'xfs with a label on sdc', body: { device: '/dev/sdc', type: 'xfs', options: ['-L', 'archive'] } },
    { summary: 'sdb is mounted at /srv/data', body: { device: '/dev/sdb', type: 'ext4' }, status: 409 },
  ],
  summary:
    'Create a filesystem on a free block device (mkfs -t <type> [-F|-f when force overrides an old signature] [options] -- <device>); answers the tool output',
  body: makeFilesystemBody,
  response: z.string(),
  async handler({ body, system, vars, events }) {
    // The type must have its helper on this box, not just be a type we know.
    await system.progress({ phase: 'probe', step: 1, steps: 2, message: `checking ${body.device} is free` });
    const listed = await Promise.all([path(vars, 'sbin'), path(vars, 'sbinLegacy')].map((d) => system.listDir(d)));
    const available = availableFilesystems(
      listed.flatMap((l) => (l ?? []).filter((e) => e.type !== 'dir').map((e) => e.name)),
    );
    if (!available.some((a) => a.name === body.type)) {
      throw badRequest(`filesystem type ${body.type} is not available on this box (see GET /fs/available_fs)`, [
        { path: 'body.type', message: `mkfs.${body.type} is not installed` },
      ]);
    }
    const options = checkMkfsOptions(body.type, body.options);
    if (!options.ok) throw badRequest(options.message); // checked by the schema already; kept for the type

    // Facts first, all read only. A /dev/disk/by-* link is resolved by lsblk, and from here on
    // the resolved node is what is checked and what is formatted.
    const dev = await blockDevice(system, vars, body.device);
    const refuse = (v: { code: string; reason: string }): never => {
      if (NOT_FOUND_CODES.has(v.code)) throw new ApiError('not_found', v.reason);
      const hint = v.code === 'signature' ? ' (send "force": true to overwrite it)' : '';
      throw conflict(`cannot create a filesystem on ${body.device}: ${v.reason}${hint}`, { reason: v.code });
    };
    // In use first (mounted, holders, swap: 409), before any probe of the device itself.
    const mounts = await listMounts(system, vars);
    const inUse = checkDeviceFree({ device: dev.path, lsblk: dev.lsblk, mounts, swaps: [], signatures: [] });
    if (!inUse.ok) refuse(inUse);
    const size = dev.lsblk[0]?.size ?? null;
    const min = MIN_BYTES[body.type];
    if (min !== undefined && size !== null && size < min) {
      throw conflict(
        `cannot create ${body.type} on ${body.device}: the device has ${size} bytes, ${body.type} needs at least ${min}`,
        { reason: 'too-small', size, minimum: min },
      );
    }
    const signatures = await signaturesOf(system, vars, dev.path);
    const verdict = checkDeviceFree({ device: dev.path, lsblk: dev.lsblk, mounts, swaps: [], signatures });
    const forced = !verdict.ok && verdict.code === 'signature' && body.force === true;
    if (!verdict.ok && !forced) refuse(verdict);

    const force = forced && FORCE_FLAG[body.type] ? [FORCE_FLAG[body.type] as string] : [];
    const argv = [bin(vars, 'mkfs'), '-t', body.type, ...force, ...options.argv, '--', dev.path];
    await system.progress({ phase: 'write', step: 2, steps: 2, message: `mkfs -t ${body.type} on ${dev.path}` });
    const r = await system.exec(argv, { timeoutMs: MKFS_TIMEOUT_MS });
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw commandFailed(argv, r);
    await events.send({ kind: 'fs.filesystem.created', data: { device: dev.path, type: body.type } });
    // The spec answers "the raw output of the creation": stderr (mke2fs's version banner,
    // warnings) then stdout, with progress counters rendered as a terminal shows them.
    const banner = r.stderr.trim() === '' ? '' : renderTerminalText(r.stderr);
    return banner === '' || banner.endsWith('\n')
      ? banner + renderTerminalText(r.stdout)
      : `${banner}\n${renderTerminalText(r.stdout)}`;
  },
});
