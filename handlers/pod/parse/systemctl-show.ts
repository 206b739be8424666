/**
 * `systemctl show --property=… -- <unit>…`: one `Key=Value` block per unit, blocks separated by
 * a blank line (systemd 252). A unit systemd does not know still gets a block
 * (`LoadState=not-found`, `ActiveState=inactive`, `UnitFileState=` empty).
 */
import { ParseError } from '../../core/parse-error';

export type UnitProperties = Record<string, string>;

export function parseSystemctlShow(text: string): UnitProperties[] {
  const out: UnitProperties[] = [];
  let cur: UnitProperties | null = null;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') {
      cur = null;
      return;
    }
    const eq = line.indexOf('=');
    if (eq <= 0 || !/^[A-Za-z][A-Za-z0-9]*$/.test(line.slice(0, eq)))
      throw new ParseError('systemctl show', `not a Key=Value line: ${JSON.stringify(line.slice(0, 80))}`, i + 1);
    if (!cur) {
      cur = {};
      out.push(cur);
    }
    cur[line.slice(0, eq)] = line.slice(eq + 1);
  });
  return out;
}

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
