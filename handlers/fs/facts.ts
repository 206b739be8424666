/**
 * What the device routes ask the system before acting: the block device (lsblk), the mounts
 * (findmnt), the signatures on a device (wipefs -n) and whether a path exists (findmnt
 * --target). Each runs the configured binary (vars.bin) with the argv shape of the parsers
 * (handlers/tools/lsblk.ts, handlers/tools/findmnt.ts, parse/wipefs.ts), and turns the tools'
 * "no such thing" answers into 404s rather than 502s.
 *
 * Swap: lsblk's MOUNTPOINTS shows `[SWAP]` for a block device in use as swap (util-linux reads
 * /proc/swaps for it), and these routes only ever act on block devices, so lsblk is the one
 * witness needed; /proc/swaps would add swap *files*, which live on a mounted filesystem and are
 * refused as "mounted" already.
 */
import { ApiError } from '../core/errors';
import { commandFailed, commandTimeout, type ExecResult, type SystemClient } from '../core/system';
import { bin, type Vars } from '../core/vars';
import { findmntArgv, parseFindmnt, type MountEntry } from '../tools/findmnt';
import { lsblkArgv, parseLsblk, type LsblkDevice } from '../tools/lsblk';
import { parseWipefs, wipefsArgv, type WipefsSignature } from './parse/wipefs';

/** The parsers' argv with the configured binary in front (tests and the demo use the defaults). */
export function withBin(vars: Vars, tool: string, argv: readonly string[]): string[] {
  return [bin(vars, tool), ...argv.slice(1)];
}

async function exec(system: SystemClient, argv: string[]): Promise<ExecResult> {
  const r = await system.exec(argv);
  if (r.timedOut) throw commandTimeout(argv, r);
  return r;
}

export interface BlockDevice {
  /** lsblk's tree for the device: the device itself and what is stacked on it */
  lsblk: LsblkDevice[];
  /** the device's own node path as lsblk names it (a /dev/disk/by-* link resolved) */
  path: string;
}

/**
 * The block device a `UUID=`/`PARTUUID=`/`LABEL=` source names: `blkid -c /dev/null -t <tag>
 * -o device` (no cache: it probes the devices, so a stale cache never answers), one device per
 * line. None is a 404; more than one (cloned disks share UUIDs, labels repeat) a 409 naming them,
 * because mounting "the first one" could mount the wrong disk. A device path is answered as is.
 */
export async function resolveMountSource(system: SystemClient, vars: Vars, source: string): Promise<string> {
  if (source.startsWith('/')) return source;
  const argv = [bin(vars, 'blkid'), '-c', '/dev/null', '-t', source, '-o', 'device'];
  const r = await exec(system, argv);
  // blkid: exit 2 when no device matches
  if (r.code === 2 && r.stdout.trim() === '') throw new ApiError('not_found', `no block device has ${source}`);
  if (r.code !== 0) throw commandFailed(argv, r);
  const devices = [
    ...new Set(
      r.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== ''),
    ),
  ];
  if (devices.length === 0) throw new ApiError('not_found', `no block device has ${source}`);
  if (devices.some((d) => !/^\/dev\/[^\0\s]+$/.test(d)))
    throw commandFailed(argv, { ...r, stderr: `unexpected blkid output: ${r.stdout.slice(0, 200)}` });
  if (devices.length > 1) {
    throw new ApiError('conflict', `${source} is ambiguous: ${devices.join(', ')} all have it; give the device path`, {
      details: { reason: 'ambiguous-source', devices },
    });
  }
  return devices[0];
}

/** `lsblk -J -b -o ... -- <device>`; 404 when it is not a block device (or does not exist). */
export async function blockDevice(system: SystemClient, vars: Vars, device: string): Promise<BlockDevice> {
  const argv = withBin(vars, 'lsblk', lsblkArgv(device));
  const r = await exec(system, argv);
  if (r.code !== 0) {
    // util-linux 2.38: "lsblk: /dev/nope: not a block device" (exit 32) for a missing path too
    if (/not a block device|No such file or directory/.test(r.stderr)) {
      throw new ApiError('not_found', `${device} is not a block device (or does not exist)`);
    }
    throw commandFailed(argv, r);
  }
  const lsblk = parseLsblk(r.stdout);
  if (lsblk.length === 0) throw new ApiError('not_found', `${device} is not a block device (or does not exist)`);
  return { lsblk, path: lsblk[0].path };
}

/** Every mount, flattened (`findmnt -J`). findmnt answers exit 1 and no output when there are none. */
export async function listMounts(system: SystemClient, vars: Vars): Promise<MountEntry[]> {
  const argv = withBin(vars, 'findmnt', findmntArgv());
  const r = await exec(system, argv);
  if (r.code === 1 && r.stdout.trim() === '') return [];
  if (r.code !== 0) throw commandFailed(argv, r);
  return parseFindmnt(r.stdout);
}

/** Signatures wipefs finds on the device, read only (`-n`). */
export async function signaturesOf(system: SystemClient, vars: Vars, device: string): Promise<WipefsSignature[]> {
  const argv = withBin(vars, 'wipefs', wipefsArgv(device));
  const r = await exec(system, argv);
  if (r.code !== 0) throw commandFailed(argv, r);
  return parseWipefs(r.stdout);
}

/**
 * Whether `path` exists, asked of findmnt: `--target` names the filesystem holding a path and
 * answers nothing (exit 1) when the path does not exist. A replayable command rather than a
 * host stat, so the demo and the route tests answer it from fixtures like everything else.
 */
export async function pathExists(system: SystemClient, vars: Vars, path: string): Promise<boolean> {
  const argv = [bin(vars, 'findmnt'), '-J', '-o', 'TARGET', '--target', path];
  const r = await exec(system, argv);
  if (r.code === 0) return true;
  if (r.code === 1 && r.stdout.trim() === '') return false;
  throw commandFailed(argv, r);
}

/** `/a/b/` → `/a/b`: mount targets are compared and passed as findmnt prints them. */
export function normalisePath(p: string): string {
  const collapsed = p.replace(/\/{2,}/g, '/');
  return collapsed.length > 1 ? collapsed.replace(/\/+$/, '') : collapsed;
}
