/** `blkid -p -o export -- DEV`: KEY=value lines (DEVNAME, UUID, TYPE, USAGE…); rc 2 = nothing found. */
import { ParseError } from '../../core/parse-error';

export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    const eq = l.indexOf('=');
    if (eq <= 0 || !/^[A-Z_]+$/.test(l.slice(0, eq))) throw new ParseError('blkid', 'not a KEY=value line', i + 1);
    out[l.slice(0, eq)] = l.slice(eq + 1);
  });
  return out;
}
