/**
 * Reads the settings of a systemd unit file (systemd.syntax(7)), a format every area that writes
 * units reads back (handlers/tools holds what more than one area reads): `[Section]` headers,
 * `Key=Value` lines, `#`/`;` comments, a trailing backslash joins the next line. Returns the last
 * value of each key per section. A line that is none of these is a ParseError naming the line.
 */
import { ParseError } from '../core/parse-error';

const P = 'unit file';

export type UnitSections = Record<string, Record<string, string>>;

export function parseUnit(text: string): UnitSections {
  if (text.includes('\0')) throw new ParseError(P, 'contains a NUL byte');
  const out: UnitSections = {};
  let section: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    let l = lines[i].replace(/\r$/, '').trim();
    if (l === '' || l.startsWith('#') || l.startsWith(';')) continue;
    while (l.endsWith('\\') && i + 1 < lines.length) {
      i++;
      l = `${l.slice(0, -1)} ${lines[i].replace(/\r$/, '').trim()}`;
    }
    const sec = /^\[([^\]]+)\]$/.exec(l);
    if (sec) {
      section = sec[1];
      out[section] ??= {};
      continue;
    }
    const eq = l.indexOf('=');
    if (eq <= 0) throw new ParseError(P, 'expected [Section] or Key=Value', no);
    if (section === undefined) throw new ParseError(P, 'a setting before any [Section]', no);
    out[section][l.slice(0, eq).trim()] = l.slice(eq + 1).trim();
  }
  return out;
}
