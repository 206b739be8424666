/**
 * The FLR synchronisation service is not part of Lustre: the site provides a systemd unit
 * (`settings.dfs.flrService`) that reads `paths.dfsFlrConfig` when it starts. A node without that
 * unit cannot apply an update, which is a 501 naming the setting (not a 502: nothing failed, the
 * feature is not installed), and nothing is written.
 */
import { ApiError } from '../core/errors';
import { areaSettings } from '../core/settings';
import type { ExecResult, SystemClient } from '../core/system';
import { commandFailed } from '../core/system';
import { bin, type Vars } from '../core/vars';
import { DFS_PATHS, dfsSettings } from './contract';
import { exec } from './commands';

export const FLR_SERVICE_SETTING = 'settings.dfs.flrService';

export function flrServiceMissing(unit: string): ApiError {
  return new ApiError(
    'not_implemented',
    `the FLR synchronisation service ${unit} does not exist on this node: install the unit that reads paths.${DFS_PATHS.flrConfig}, or name it in ${FLR_SERVICE_SETTING}`,
    { details: { setting: FLR_SERVICE_SETTING, unit, configPath: `paths.${DFS_PATHS.flrConfig}` } },
  );
}

/** `systemctl restart` of a unit systemd does not know: exit 5 and `Unit <name> not found.` */
export const unitNotFound = (r: ExecResult): boolean => r.code === 5 && /\bUnit \S+ not found\b/.test(r.stderr);

/** `systemctl show --property=LoadState --value -- <unit>`: `not-found` for a unit no file defines. */
export async function requireFlrService(system: SystemClient, vars: Vars): Promise<string> {
  const unit = areaSettings(vars, 'dfs', dfsSettings).flrService;
  const argv = [bin(vars, 'systemctl'), 'show', '--property=LoadState', '--value', '--', unit];
  const r = await exec(system, vars, argv, 'systemctlMs');
  if (r.code !== 0) throw commandFailed(argv, r);
  if (r.stdout.trim() === 'not-found') throw flrServiceMissing(unit);
  return unit;
}
