/**
 * `lfs df [-h|-H|-i] [-v] [-l]`. Rows are split on whitespace (large numbers overflow their
 * printf widths and collapse the columns to single spaces). Tolerated:
 * - both summary spellings: `filesystem_summary:` (2.10+) and `filesystem summary:` (before);
 * - several filesystems, each with its own header and block;
 * - error rows `<UUID padded>: <strerror>` and `: inactive device`, short UUIDs (`OST0003`);
 * - state flags after the mount column (`D`, `DR`, `(0NNN)` for unknown bits);
 * - a truncated block (no summary: lfs df stopped or was killed while an OSS was down);
 * - a terminal-wrapped paste (`[M` + newline + `DT:0]`): a mount column with an unclosed `[` is
 *   joined with the next line;
 * - 2.17 `--output` columns (no `Mounted on`): the values are kept under their header names.
 */
import { ParseError } from '../../core/parse-error';

export type DfMode = 'blocks' | 'bytes' | 'inodes' | 'custom';

export interface DfRow {
  uuid: string;
  /** The printed columns (numbers as text: `-h` prints `52.7G`). */
  total?: string;
  used?: string;
  available?: string;
  /** `use%` / `iuse%` without the `%`. */
  usePercent?: number;
  /** Mount point without the `[MDT:n]` suffix. */
  mount?: string;
  targetType?: 'MDT' | 'OST';
  targetIndex?: number;
  flags?: string;
  /** Error text instead of numbers (`Resource temporarily unavailable`, `inactive device`). */
  error?: string;
  inactive?: boolean;
  /** `--output` mode: every column by header name. */
  columns?: Record<string, string>;
}

export interface DfBlock {
  mode: DfMode;
  header: string[];
  rows: DfRow[];
  summary?: DfRow;
}

const SUMMARY = /^filesystem[ _]summary:\s*(.*)$/;
const FLAGS = /^([DRNSIf]+|\(0[0-7]+\))+$/;

function modeOf(header: string[]): DfMode {
  const h = header.join(' ');
  if (/^UUID 1K-blocks Used Available Use% Mounted on$/.test(h)) return 'blocks';
  if (/^UUID bytes Used Avail(able)? Use% Mounted on$/.test(h)) return 'bytes';
  if (/^UUID Inodes IUsed IFree IUse% Mounted on$/.test(h)) return 'inodes';
  return 'custom';
}

function dataRow(uuid: string, f: string[], block: DfBlock, line: number): DfRow {
  if (block.mode === 'custom') {
    const names = block.header.slice(1);
    if (f.length < names.length) throw new ParseError('lfs df', `expected ${names.length} columns`, line);
    const columns: Record<string, string> = {};
    names.forEach((n, i) => (columns[n] = f[i]));
    return { uuid, columns };
  }
  if (f.length < 5) throw new ParseError('lfs df', `expected 4 numbers and a mount point after ${uuid}`, line);
  const [total, used, available, pct, ...rest] = f;
  const num = block.mode === 'blocks' || block.mode === 'inodes' ? /^\d+$/ : /^\d+(\.\d+)?[KMGTPEkmgtpe]?$/;
  const numOrH = /^\d+(\.\d+)?[KMGTPEkmgtpe]?$/; // -iH prints 932.2k
  for (const [n, v] of [
    ['total', total],
    ['used', used],
    ['available', available],
  ] as const) {
    if (!num.test(v) && !(block.mode === 'inodes' && numOrH.test(v)))
      throw new ParseError('lfs df', `${n} ${JSON.stringify(v)} is not a number`, line);
  }
  const p = /^(\d+)%$/.exec(pct);
  if (!p) throw new ParseError('lfs df', `use% ${JSON.stringify(pct)} is not a percentage`, line);
  let flags: string | undefined;
  if (rest.length > 1 && FLAGS.test(rest[rest.length - 1])) flags = rest.pop();
  const mountCol = rest.join(' ');
  const row: DfRow = { uuid, total, used, available, usePercent: Number(p[1]) };
  const m = /^(.*)\[(MDT|OST):(\d+)\]$/.exec(mountCol);
  if (m) {
    row.mount = m[1];
    row.targetType = m[2] as 'MDT' | 'OST';
    row.targetIndex = Number(m[3]);
  } else {
    row.mount = mountCol;
  }
  if (flags) row.flags = flags;
  return row;
}

export function parseLfsDf(text: string): DfBlock[] {
  const blocks: DfBlock[] = [];
  const raw = text.split('\n');
  // join terminal-wrapped rows: a line whose last token opened `[` without closing it
  const lines: { text: string; n: number }[] = [];
  for (let i = 0; i < raw.length; i++) {
    let l = raw[i];
    const n = i + 1;
    while (/\[[^\]\s]*$/.test(l.trimEnd()) && i + 1 < raw.length && /^[A-Z:0-9]*\]/.test(raw[i + 1]))
      l = l.trimEnd() + raw[++i];
    lines.push({ text: l, n });
  }
  let cur: DfBlock | undefined;
  for (const { text: l0, n } of lines) {
    const l = l0.trim();
    if (l === '') continue;
    if (/^UUID\s/.test(l)) {
      cur = { mode: 'blocks', header: [], rows: [] };
      cur.header = l
        .replace(/Mounted on$/, 'Mounted_on')
        .split(/\s+/)
        .map((h) => (h === 'Mounted_on' ? 'Mounted on' : h));
      cur.mode = modeOf(cur.header.map((h) => h));
      if (cur.mode === 'custom' && cur.header.includes('Mounted on'))
        throw new ParseError('lfs df', `unknown header ${JSON.stringify(l.slice(0, 60))}`, n);
      blocks.push(cur);
      continue;
    }
    const s = SUMMARY.exec(l);
    if (s) {
      // --only-summary prints the summary with no header: a 1K-blocks block of its own
      if (!cur) {
        cur = { mode: 'blocks', header: [], rows: [] };
        blocks.push(cur);
      }
      if (cur.summary) throw new ParseError('lfs df', 'a second summary in one block', n);
      cur.summary = dataRow('filesystem_summary', s[1].split(/\s+/), cur, n);
      continue;
    }
    if (!cur) throw new ParseError('lfs df', 'a row before any UUID header', n);
    const err = /^(\S+)\s*: (.+?)\s*$/.exec(l);
    if (err && !/^\d/.test(err[2])) {
      const row: DfRow = { uuid: err[1], error: err[2] };
      if (err[2] === 'inactive device') row.inactive = true;
      cur.rows.push(row);
      continue;
    }
    const f = l.split(/\s+/);
    cur.rows.push(dataRow(f[0], f.slice(1), cur, n));
  }
  if (blocks.length === 0 && text.trim() !== '') throw new ParseError('lfs df', 'no UUID header');
  return blocks;
}
