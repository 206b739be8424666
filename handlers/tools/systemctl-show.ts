/**
 * `systemctl show --property=… -- <unit>…` (every area that asks systemd about its units reads it
 * here: handlers/tools holds the parsers of commands more than one area runs): one `Key=Value` block per unit, blocks separated by
 * a blank line (systemd 252). A unit systemd does not know still gets a block
 * (`LoadState=not-found`, `ActiveState=inactive`, `UnitFileState=` empty).
 */
import { ParseError } from '../core/parse-error';

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
