/**
 * After regenerate, the modules that serve with the appliance's key load the new one: those of
 * `settings.certificate.restartUnits` that are installed and running are restarted
 * (`systemctl try-restart`, so one stopped in between stays stopped); one that is stopped stays
 * stopped, one the box does not have is skipped. Each is reported in the event.
 */
import { parseSystemctlShow } from '../tools/systemctl-show';
import type { SystemClient } from '../core/system';
import { bin, type Vars } from '../core/vars';

export interface Restarts {
  restarted: string[];
  notRunning: string[];
  notInstalled: string[];
}

const RUNNING = new Set(['active', 'reloading', 'activating']);

export const showArgv = (vars: Vars, units: string[]): string[] => [
  bin(vars, 'systemctl'),
  'show',
  '--no-pager',
  '--property=Id,LoadState,ActiveState',
  '--',
  ...units,
];

export const restartArgv = (vars: Vars, units: string[]): string[] => [
  bin(vars, 'systemctl'),
  'try-restart',
  '--',
  ...units,
];

/** Which units to restart: systemctl show answers one block per unit, in the order asked. */
export function planRestarts(units: string[], showOutput: string): Restarts {
  const blocks = parseSystemctlShow(showOutput);
  const out: Restarts = { restarted: [], notRunning: [], notInstalled: [] };
  for (const [i, unit] of units.entries()) {
    const p = blocks.find((b) => b.Id === unit) ?? blocks[i];
    if (!p || p.LoadState === 'not-found') out.notInstalled.push(unit);
    else if (RUNNING.has(p.ActiveState ?? '')) out.restarted.push(unit);
    else out.notRunning.push(unit);
  }
  return out;
}

/** Runs the plan; throws the command's error (the route names the units). */
export async function restartUnits(system: SystemClient, vars: Vars, units: string[]): Promise<Restarts> {
  if (units.length === 0) return { restarted: [], notRunning: [], notInstalled: [] };
  const shown = await system.run(showArgv(vars, units));
  const plan = planRestarts(units, shown.stdout);
  if (plan.restarted.length) await system.run(restartArgv(vars, plan.restarted));
  return plan;
}
