/** What the verify and create routes share: pool look-ups, the target mount and its fstab line. */
import { ApiError } from '../core/errors';
import type { SystemClient } from '../core/system';
import { commandFailed } from '../core/system';
import { bin, type Vars } from '../core/vars';
import { dfsPath, exec, lustreMounts, makeMountPoint, persistMount, run } from './commands';
import { parseZpoolList } from './parse/zfs';

/** `zpool list -- <pool>`: its row, or 404 when there is no such pool. */
export async function poolRow(system: SystemClient, vars: Vars, pool: string): Promise<Record<string, string>> {
  const argv = [bin(vars, 'zpool'), 'list', '--', pool];
  const r = await exec(system, vars, argv, 'zfsMs');
  if (r.code !== 0) {
    if (/no such pool/.test(r.stderr)) throw new ApiError('not_found', `no ZFS pool ${pool} on this node`);
    throw commandFailed(argv, r);
  }
  const row = parseZpoolList(r.stdout).find((x) => x.name === pool);
  if (!row) throw new ApiError('bad_gateway', `zpool list did not list ${pool}`);
  return row;
}

/** mkfs.lustre's refusal of an existing target is a 409; anything else a 502. */
export function mkfsFailure(
  argv: string[],
  r: { code: number; stderr: string; stdout: string },
  dataset: string,
): ApiError {
  const text = `${r.stderr}\n${r.stdout}`;
  if (/already exists|is already|formatted|--reformat/i.test(text)) {
    return new ApiError('conflict', `${dataset} already holds a Lustre target (reformat is only done when asked)`, {
      details: { command: argv, exitCode: r.code, stderr: r.stderr.trim().slice(0, 2000) },
    });
  }
  return commandFailed(argv, { ...r, signal: null, timedOut: false, truncated: false, durationMs: 0 });
}

/**
 * Mount a freshly made target at `<targetMountRoot>/<label>` (`mount -t lustre -- <pool/ds> <dir>`)
 * and, when asked, add it to fstab. A failed fstab write unmounts again (nothing half done).
 */
export async function mountTarget(
  system: SystemClient,
  vars: Vars,
  dataset: string,
  label: string,
  persist: boolean,
): Promise<string> {
  const dir = `${dfsPath(vars, 'targetMountRoot')}/${label}`;
  await makeMountPoint(system, vars, dir);
  await run(system, vars, [bin(vars, 'mount'), '-t', 'lustre', '--', dataset, dir], 'mountMs');
  if (persist) {
    try {
      await persistMount(system, vars, dataset, dir);
    } catch (e) {
      await exec(system, vars, [bin(vars, 'umount'), '--', dir], 'mountMs').catch(() => undefined);
      throw e;
    }
  }
  return dir;
}

/** Where a dataset is mounted as a Lustre target now (from `mount -t lustre`), if it is. */
export async function targetMountOf(system: SystemClient, vars: Vars, dataset: string): Promise<string | undefined> {
  return (await lustreMounts(system, vars)).find((m) => m.spec === dataset)?.mountpoint;
}
