/** A pod's state and lock from its unit's `systemctl show` properties (README "State and locked"). */
import type { UnitProperties } from '../tools/systemctl-show';

export type PodServiceState = 'offline' | 'online' | 'disabled';

const RUNNING = new Set(['active', 'reloading', 'activating']);
const ENABLED = new Set([
  'enabled',
  'enabled-runtime',
  'static',
  'alias',
  'linked',
  'linked-runtime',
  'indirect',
  'generated',
]);

/**
 * The rule (handlers/pod/README.md "State and locked"):
 *   online    ActiveState is active, reloading or activating (whatever the enablement)
 *   offline   not running, but enabled (UnitFileState enabled, static, linked, …): it should run
 *   disabled  not running and not enabled (disabled, masked, unknown to systemd)
 *   locked    the unit is masked (UnitFileState masked/masked-runtime or LoadState masked):
 *             nothing can start or enable it until it is unmasked
 */
export function unitState(p: UnitProperties | undefined): { state: PodServiceState; locked: boolean } {
  const locked =
    p !== undefined &&
    (p.LoadState === 'masked' || p.UnitFileState === 'masked' || p.UnitFileState === 'masked-runtime');
  if (p && RUNNING.has(p.ActiveState ?? '')) return { state: 'online', locked };
  if (p && !locked && ENABLED.has(p.UnitFileState ?? '')) return { state: 'offline', locked };
  return { state: 'disabled', locked };
}
