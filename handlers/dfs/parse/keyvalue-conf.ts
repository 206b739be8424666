/**
 * Plain `key=value` configuration (the lamigo/lpurge files IML generates for FLR tiering) and the
 * systemd unit IML writes to run lamigo. Neither is the FLR synchronisation configuration this
 * area writes (that one is JSON, see handlers/dfs/flr.ts); they are parsed to know those files.
 */
import { ParseError } from '../../core/parse-error';

export function parseKeyValueConf(text: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((l, i) => {
    const s = l.trim();
    if (s === '' || s.startsWith('#')) return;
    const m = /^([A-Za-z0-9_.-]+)=(.*)$/.exec(s);
    if (!m) throw new ParseError(what, 'expected key=value', i + 1);
    out[m[1]] = m[2];
  });
  return out;
}

export interface UnitFile {
  sections: Record<string, { key: string; value: string }[]>;
}

/** A systemd unit: `[Section]` headers and `Key=Value` lines (repeatable keys kept in order). */
export function parseUnitFile(text: string): UnitFile {
  const sections: UnitFile['sections'] = {};
  let cur: string | undefined;
  text.split('\n').forEach((l, i) => {
    const s = l.trim();
    if (s === '' || s.startsWith('#') || s.startsWith(';')) return;
    const h = /^\[([A-Za-z]+)\]$/.exec(s);
    if (h) {
      cur = h[1];
      sections[cur] ??= [];
      return;
    }
    const m = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(s);
    if (!m || !cur) throw new ParseError('systemd unit', 'expected [Section] or Key=Value', i + 1);
    sections[cur].push({ key: m[1], value: m[2] });
  });
  if (Object.keys(sections).length === 0) throw new ParseError('systemd unit', 'no [Section]');
  return { sections };
}
