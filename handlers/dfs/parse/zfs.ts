/**
 * The ZFS listings the verify route reads: `zpool list`, `zpool status` (and the `zpool import`
 * listing, same layout with ` config:` and `id:`), `zfs list`. Whitespace split, `-` is empty.
 */
import { ParseError } from '../../core/parse-error';

/** A header-and-columns listing (`zpool list`, `zfs list`): rows keyed by lower-case header. */
function parseColumns(text: string, what: string, required: string[]): Record<string, string>[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new ParseError(what, 'empty output');
  const header = lines[0]
    .trim()
    .split(/\s+/)
    .map((h) => h.toLowerCase());
  for (const r of required) if (!header.includes(r)) throw new ParseError(what, `no ${r.toUpperCase()} column`, 1);
  return lines.slice(1).map((l, i) => {
    const f = l.trim().split(/\s+/);
    if (f.length !== header.length)
      throw new ParseError(what, `expected ${header.length} columns, got ${f.length}`, i + 2);
    return Object.fromEntries(header.map((h, j) => [h, f[j]]));
  });
}

export const parseZpoolList = (text: string) =>
  parseColumns(text, 'zpool list', ['name', 'size', 'alloc', 'free', 'health']);
export const parseZfsList = (text: string) => parseColumns(text, 'zfs list', ['name', 'used', 'avail', 'mountpoint']);

export interface VdevLine {
  name: string;
  depth: number;
  state?: string;
  read?: string;
  write?: string;
  cksum?: string;
  note?: string;
  /** `spares`, `logs`, `cache`… section the line is in; absent for the pool tree. */
  section?: string;
}

export interface ZpoolStatus {
  pool: string;
  id?: string;
  state: string;
  status?: string;
  action?: string;
  see?: string;
  scan?: string;
  config: VdevLine[];
  errors?: string;
}

const SECTIONS = new Set(['spares', 'logs', 'cache', 'special', 'dedup']);
const STATES = /^(ONLINE|DEGRADED|FAULTED|OFFLINE|UNAVAIL|REMOVED|AVAIL|INUSE|SUSPENDED)$/;

/** `zpool status [-v]` and `zpool import` (no arguments): one record per pool. */
export function parseZpoolStatus(text: string): ZpoolStatus[] {
  const pools: ZpoolStatus[] = [];
  let cur: ZpoolStatus | undefined;
  let key: string | undefined;
  let inConfig = false;
  let section: string | undefined;
  text.split('\n').forEach((raw, i) => {
    const n = i + 1;
    if (raw.trim() === '') return;
    const kv = /^\s*([a-z]+): ?(.*)$/.exec(raw);
    if (
      kv &&
      !raw.startsWith('\t') &&
      ['pool', 'id', 'state', 'status', 'action', 'see', 'scan', 'config', 'errors'].includes(kv[1])
    ) {
      const [, k, v] = kv;
      if (k === 'pool') {
        cur = { pool: v.trim(), state: '', config: [] };
        pools.push(cur);
        inConfig = false;
        section = undefined;
      } else if (!cur) throw new ParseError('zpool status', `${k}: before any pool:`, n);
      else if (k === 'config') inConfig = true;
      else {
        inConfig = k === 'config';
        (cur as unknown as Record<string, string>)[k] = v.trim();
      }
      key = k;
      return;
    }
    if (!cur) throw new ParseError('zpool status', 'a line before any pool:', n);
    if (raw.startsWith('\t') && inConfig) {
      const body = raw.slice(1);
      const depth = (body.length - body.trimStart().length) / 2;
      const f = body.trim().split(/\s+/);
      if (f[0] === 'NAME' && f[1] === 'STATE') return;
      if (depth === 0 && SECTIONS.has(f[0]) && f.length === 1) {
        section = f[0];
        return;
      }
      const v: VdevLine = { name: f[0], depth };
      if (f[1] !== undefined) {
        if (!STATES.test(f[1]))
          throw new ParseError('zpool status', `vdev ${f[0]}: unknown state ${JSON.stringify(f[1])}`, n);
        v.state = f[1];
      }
      let rest = f.slice(2);
      if (rest.length >= 3 && rest.slice(0, 3).every((x) => /^\d+(\.\d+)?[KMGTP]?$/.test(x))) {
        [v.read, v.write, v.cksum] = rest;
        rest = rest.slice(3);
      }
      if (rest.length) v.note = rest.join(' ');
      if (section) v.section = section;
      cur.config.push(v);
      return;
    }
    if (raw.startsWith('\t') && key && key !== 'config') {
      // continuation of status:/action:/scan:
      const rec = cur as unknown as Record<string, string>;
      rec[key] = `${rec[key]}\n${raw.trim()}`;
      return;
    }
    throw new ParseError('zpool status', `unexpected line ${JSON.stringify(raw.slice(0, 40))}`, n);
  });
  if (pools.length === 0 && text.trim() !== '') throw new ParseError('zpool status', 'no pool:');
  for (const p of pools) if (!p.state) throw new ParseError('zpool status', `pool ${p.pool} has no state:`);
  return pools;
}
