/**
 * lnetctl YAML (cYAML/libyaml): `net show [-v N]`, `peer show [-v]`, `export [--backup]`,
 * `global show`, `stats show`, `ping`. Keys contain spaces (`net type`, `local NI(s)`, `primary
 * nid`, `peer ni`); every key is optional across 2.10-2.16. When LNet is down lnetctl prints
 * `show:` error blocks, one per section, and `export` repeats the top-level key `show:` — strict
 * YAML refuses that, so the text is split into top-level blocks and each is parsed on its own.
 */
import { parse as parseYaml } from 'yaml';
import { ParseError } from '../../core/parse-error';

export interface LnetBlock {
  key: string;
  value: unknown;
}

export interface LnetError {
  section: string;
  errno: number;
  descr: string;
}

function yamlOf(text: string, what: string, line: number): unknown {
  try {
    return parseYaml(text);
  } catch (e) {
    throw new ParseError(what, `not YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, line);
  }
}

/** Top-level `key:` blocks in order (duplicates kept). */
export function lnetBlocks(text: string, what = 'lnetctl'): LnetBlock[] {
  const lines = text.split('\n');
  const out: LnetBlock[] = [];
  let start = -1;
  const flush = (end: number) => {
    if (start < 0) return;
    const doc = yamlOf(lines.slice(start, end).join('\n'), what, start + 1);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
      throw new ParseError(what, 'a top-level block is not a map', start + 1);
    for (const [key, value] of Object.entries(doc)) out.push({ key, value });
  };
  lines.forEach((l, i) => {
    if (l.trim() === '' || /^\s/.test(l) || l.startsWith('#')) return;
    if (!/^[A-Za-z_][\w ()-]*:(\s|$)/.test(l))
      throw new ParseError(what, `expected a top-level "key:" line, got ${JSON.stringify(l.slice(0, 40))}`, i + 1);
    flush(i);
    start = i;
  });
  flush(lines.length);
  return out;
}

/** The `show:` error blocks (`errno`, `descr`) lnetctl prints when LNet is down or a call failed. */
export function lnetErrors(blocks: LnetBlock[]): LnetError[] {
  const out: LnetError[] = [];
  for (const b of blocks) {
    if (
      b.key !== 'show' &&
      b.key !== 'add' &&
      b.key !== 'del' &&
      b.key !== 'import' &&
      b.key !== 'ping' &&
      b.key !== 'manage' &&
      b.key !== 'configure'
    )
      continue;
    if (!Array.isArray(b.value)) continue;
    for (const item of b.value) {
      if (!item || typeof item !== 'object') continue;
      for (const [section, v] of Object.entries(item as Record<string, unknown>)) {
        const e = v as { errno?: unknown; descr?: unknown } | null;
        if (e && typeof e === 'object' && typeof e.errno === 'number')
          out.push({ section, errno: e.errno, descr: String(e.descr ?? '') });
      }
    }
  }
  return out;
}

function rec(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

export interface LocalNi {
  nid: string;
  status: string;
  /** index string → interface name; absent when lnetctl printed none (lo, some tcp NIs). */
  interfaces?: Record<string, string>;
}
export interface Network {
  net_type: string;
  local_ni_s: LocalNi[];
}
/** A NI with everything `-v` printed (statistics, tunables, health stats…) under its own keys. */
export interface LocalNiDetail extends LocalNi {
  detail: Record<string, unknown>;
}
export interface NetworkDetail {
  net_type: string;
  local_ni_s: LocalNiDetail[];
}

function toNetworks(v: unknown, what: string): NetworkDetail[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new ParseError(what, 'net: is not a list');
  return v.map((n, i) => {
    const r = rec(n);
    const t = str(r['net type']);
    if (!t) throw new ParseError(what, `net entry ${i} has no "net type"`);
    const nis = list(r['local NI(s)']).map((ni, j) => {
      const x = rec(ni);
      const nid = str(x.nid);
      if (!nid) throw new ParseError(what, `net ${t} NI ${j} has no nid`);
      const out: LocalNiDetail = { nid, status: str(x.status) ?? 'unknown', detail: {} };
      if (x.interfaces && typeof x.interfaces === 'object') {
        out.interfaces = Object.fromEntries(Object.entries(rec(x.interfaces)).map(([k, name]) => [k, String(name)]));
      }
      for (const [k, val] of Object.entries(x))
        if (k !== 'nid' && k !== 'status' && k !== 'interfaces') out.detail[k] = val;
      return out;
    });
    return { net_type: t, local_ni_s: nis };
  });
}

/** `lnetctl net show [-v N]`: the networks; `errors` when lnetctl printed `show:` errors instead. */
export function parseNetShow(text: string): { networks: NetworkDetail[]; errors: LnetError[] } {
  const blocks = lnetBlocks(text, 'lnetctl net show');
  const errors = lnetErrors(blocks);
  const net = blocks.find((b) => b.key === 'net');
  if (!net && errors.length === 0 && text.trim() !== '') throw new ParseError('lnetctl net show', 'no net: block');
  return { networks: toNetworks(net?.value, 'lnetctl net show'), errors };
}

/** The spec's network record (no verbose detail). */
export function networkRecord(n: Network): Network {
  return {
    net_type: n.net_type,
    local_ni_s: n.local_ni_s.map((ni) =>
      ni.interfaces
        ? { nid: ni.nid, status: ni.status, interfaces: ni.interfaces }
        : { nid: ni.nid, status: ni.status },
    ),
  };
}

export interface PeerNi {
  nid: string;
  state?: string;
  [k: string]: unknown;
}
export interface Peer {
  primary_nid: string;
  multi_rail: boolean;
  peer_ni: PeerNi[];
  /** `-v` level 3+: the peer-level `peer state`. */
  peer_state?: number;
}

function toPeers(v: unknown, what: string): Peer[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new ParseError(what, 'peer: is not a list');
  return v.map((p, i) => {
    const r = rec(p);
    const primary = str(r['primary nid']);
    if (!primary) throw new ParseError(what, `peer ${i} has no "primary nid"`);
    const mr = r['Multi-Rail'];
    const peer: Peer = {
      primary_nid: primary,
      multi_rail: mr === true || mr === 'True',
      peer_ni: list(r['peer ni']).map((ni, j) => {
        const x = rec(ni);
        const nid = str(x.nid);
        if (!nid) throw new ParseError(what, `peer ${primary} NI ${j} has no nid`);
        const out: PeerNi = { nid };
        for (const [k, val] of Object.entries(x)) if (k !== 'nid') out[k.replace(/ /g, '_')] = val;
        return out;
      }),
    };
    if (typeof r['peer state'] === 'number') peer.peer_state = r['peer state'];
    return peer;
  });
}

/** `lnetctl peer show [-v]`. */
export function parsePeerShow(text: string): { peers: Peer[]; errors: LnetError[] } {
  const blocks = lnetBlocks(text, 'lnetctl peer show');
  const errors = lnetErrors(blocks);
  const peer = blocks.find((b) => b.key === 'peer');
  if (!peer && errors.length === 0 && text.trim() !== '') throw new ParseError('lnetctl peer show', 'no peer: block');
  return { peers: toPeers(peer?.value, 'lnetctl peer show'), errors };
}

export interface LnetExport {
  net: NetworkDetail[];
  peer: Peer[];
  global: Record<string, unknown>;
  /** route/routing/buffers as printed. */
  other: Record<string, unknown>;
  errors: LnetError[];
}

/** `lnetctl export [--backup]` (and the LNet-down variant with repeated `show:` blocks). */
export function parseExport(text: string): LnetExport {
  const blocks = lnetBlocks(text, 'lnetctl export');
  const out: LnetExport = { net: [], peer: [], global: {}, other: {}, errors: lnetErrors(blocks) };
  for (const b of blocks) {
    if (b.key === 'net') out.net = toNetworks(b.value, 'lnetctl export');
    else if (b.key === 'peer') out.peer = toPeers(b.value, 'lnetctl export');
    else if (b.key === 'global') out.global = { ...out.global, ...rec(b.value) };
    else if (b.key !== 'show') out.other[b.key] = b.value;
  }
  return out;
}

/** `lnetctl global show`: the `global:` map (key names drift: `max_intf` vs `max_interfaces`). */
export function parseGlobalShow(text: string): Record<string, number | string> {
  const blocks = lnetBlocks(text, 'lnetctl global show');
  const g = blocks.find((b) => b.key === 'global');
  if (!g) throw new ParseError('lnetctl global show', 'no global: block');
  const out: Record<string, number | string> = {};
  for (const [k, v] of Object.entries(rec(g.value))) {
    if (typeof v !== 'number' && typeof v !== 'string')
      throw new ParseError('lnetctl global show', `global.${k} is not a scalar`);
    out[k] = v;
  }
  return out;
}

/** `lnetctl stats show`: integer counters. */
export function parseStatsShow(text: string): Record<string, number> {
  const blocks = lnetBlocks(text, 'lnetctl stats show');
  const s = blocks.find((b) => b.key === 'statistics');
  if (!s) throw new ParseError('lnetctl stats show', 'no statistics: block');
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(rec(s.value))) {
    if (typeof v !== 'number') throw new ParseError('lnetctl stats show', `statistics.${k} is not a number`);
    out[k] = v;
  }
  return out;
}
