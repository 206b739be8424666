import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { isJsonObject, parseJsonMulti, type JsonObject, type JsonValue } from './json-multi';
import { hex32ToIPv4, normalizeHex32, prefixLengthOfMask } from './tc-units';

const PARSER = 'tc-filter';

export const u32Match = z
  .object({
    /** byte offset into the IPv4 header (12 = source address, 16 = destination) */
    offset: z.number().int(),
    /** 8 lower-case hex digits (tc's JSON drops leading zeros; we restore them) */
    value: z.string().regex(/^[0-9a-f]{8}$/),
    mask: z.string().regex(/^[0-9a-f]{8}$/),
    /** "" for a fixed offset, "nexthdr+" when relative to the next header */
    offmask: z.string(),
    /** what the match selects, when it is one of the decodable IPv4 forms */
    field: z.enum(['src', 'dst', 'sport', 'dport']).optional(),
    /** for src/dst: the network address selected (value & mask) */
    address: z.string().optional(),
    prefix_length: z.number().int().min(0).max(32).optional(),
    /** for sport/dport */
    port: z.number().int().min(0).max(65535).optional(),
  })
  .strict();
export type U32Match = z.infer<typeof u32Match>;

export const filterEntry = z
  .object({
    /** the qdisc/class the filter hangs on, e.g. "1:" */
    parent: z.string(),
    protocol: z.string(),
    pref: z.number().int(),
    kind: z.string(),
    chain: z.number().int().optional(),
    /** filter handle; for u32 the "fh" node id such as "800::1" */
    handle: z.string().optional(),
    /** class the filter sends matching packets to ("flowid"/"classid"), e.g. "1:1" */
    flowid: z.string().optional(),
    order: z.number().int().optional(),
    /** u32 keys, every one of them in tc's order (empty for other kinds) */
    matches: z.array(u32Match),
  })
  .strict();
export type FilterEntry = z.infer<typeof filterEntry>;

/**
 * `tc -j filter show dev X` -> filter entries, keeping EVERY u32 match.
 *
 * iproute2 prints each u32 key as another `"match":{...}` member of the same object (6.1 and
 * HEAD), so `JSON.parse` would keep only the last one; a rule matching "dst 192.168.1.50 and
 * dport 445" would read as "dport 445" alone. We read with json-multi, which keeps duplicates.
 *
 * tc lists bookkeeping entries too: one per (pref, protocol) without options, and for u32 one
 * per hash table (`fh 800:` with `ht_divisor`). Those are not filters anyone wrote and are left
 * out; every entry returned classifies packets.
 */
export function parseTcFilter(stdout: string): FilterEntry[] {
  const doc = parseJsonMulti(stdout, PARSER);
  if (!Array.isArray(doc)) throw new ParseError(PARSER, 'expected a JSON array of filters', 1);
  const out: FilterEntry[] = [];
  for (const item of doc) {
    const f = fromJson(item);
    if (f) out.push(f);
  }
  return out;
}

function fromJson(item: JsonValue): FilterEntry | null {
  if (!isJsonObject(item)) throw new ParseError(PARSER, 'filter entry is not an object', 1);
  const at = item.line;
  const str = (o: JsonObject, key: string, required: boolean): string | undefined => {
    const v = o.one(key, PARSER);
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string') throw new ParseError(PARSER, `filter "${key}" is missing or not a string`, o.line);
    return v;
  };
  const int = (o: JsonObject, key: string, required: boolean): number | undefined => {
    const v = o.one(key, PARSER);
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v))
      throw new ParseError(PARSER, `filter "${key}" is missing or not an integer`, o.line);
    return v;
  };

  const parent = str(item, 'parent', true)!;
  const protocol = str(item, 'protocol', true)!;
  const pref = int(item, 'pref', true)!;
  const kind = str(item, 'kind', true)!;
  const chain = int(item, 'chain', false);

  const options = item.one('options', PARSER);
  if (options === undefined) return null; // per-pref header
  if (!isJsonObject(options)) throw new ParseError(PARSER, 'filter "options" is not an object', at);

  // u32 calls its handle "fh"; other classifiers (flower, fw, matchall) use "handle".
  const fhRaw = options.one('fh', PARSER) ?? options.one('handle', PARSER);
  const handle = typeof fhRaw === 'number' ? `0x${fhRaw.toString(16)}` : typeof fhRaw === 'string' ? fhRaw : undefined;
  if (fhRaw !== undefined && handle === undefined)
    throw new ParseError(PARSER, 'filter handle is neither text nor a number', options.line);
  const flowid = str(options, 'flowid', false) ?? str(options, 'classid', false);

  if (kind === 'u32' && handle !== undefined && /^[0-9a-f]+:$/.test(handle) && flowid === undefined) {
    return null; // u32 hash table ("fh 800:", "ht_divisor 1")
  }

  const entry: FilterEntry = { parent, protocol, pref, kind, matches: [] };
  if (chain !== undefined) entry.chain = chain;
  if (handle !== undefined) entry.handle = handle;
  if (flowid !== undefined) entry.flowid = flowid;
  const order = int(options, 'order', false);
  if (order !== undefined) entry.order = order;

  // Filled last so `matches` follows the scalar fields when printed.
  const matches: U32Match[] = [];
  if (kind === 'u32') {
    for (const m of options.all('match')) {
      if (!isJsonObject(m)) throw new ParseError(PARSER, 'u32 "match" is not an object', options.line);
      const value = str(m, 'value', true)!;
      const mask = str(m, 'mask', true)!;
      const offmask = str(m, 'offmask', false) ?? '';
      const off = int(m, 'off', true)!;
      matches.push(decodeU32Match(value, mask, off, offmask, protocol, m.line));
    }
  }
  return { ...entry, matches };
}

/**
 * One u32 key -> its raw form plus, for the IPv4 forms we can name, what it selects. u32 keys
 * are 32-bit words at a byte offset into the IPv4 header (when offmask is "" and the filter's
 * protocol is ip): 12 = source address, 16 = destination, 20 = the first transport word
 * (source port in the high half, destination port in the low half, assuming no IP options,
 * which is what `match ip sport/dport` itself assumes).
 */
export function decodeU32Match(
  valueText: string,
  maskText: string,
  offset: number,
  offmask: string,
  protocol: string,
  line: number,
): U32Match {
  const value = normalizeHex32(valueText);
  const mask = normalizeHex32(maskText);
  if (value === null || mask === null) {
    throw new ParseError(
      PARSER,
      `u32 match ${JSON.stringify(valueText)}/${JSON.stringify(maskText)} is not 32-bit hex`,
      line,
    );
  }
  const m: U32Match = { offset, value, mask, offmask };
  if (protocol !== 'ip' || offmask !== '') return m;

  if (offset === 12 || offset === 16) {
    const len = prefixLengthOfMask(mask);
    if (len === null) return m; // a mask with holes selects no single network
    const net = (parseInt(value, 16) & parseInt(mask, 16)) >>> 0;
    m.field = offset === 12 ? 'src' : 'dst';
    m.address = hex32ToIPv4(net.toString(16).padStart(8, '0'));
    m.prefix_length = len;
  } else if (offset === 20) {
    if (mask === '0000ffff') {
      m.field = 'dport';
      m.port = parseInt(value, 16) & 0xffff;
    } else if (mask === 'ffff0000') {
      m.field = 'sport';
      m.port = parseInt(value, 16) >>> 16;
    }
  }
  return m;
}

/**
 * `tc filter show dev X` (text) -> the same entries as parseTcFilter.
 *
 * Not used by the product (which reads JSON); kept because the two readings of one capture
 * must agree, which checks the duplicate-key JSON reading against an independent path, and
 * because it reads outputs of iproute2 builds whose JSON is broken (`-p -j` in 6.1).
 *   filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 *flowid 1:10 not_in_hw
 *     match c0a80132/ffffffff at 16
 */
export function parseTcFilterText(stdout: string): FilterEntry[] {
  const out: FilterEntry[] = [];
  let current: FilterEntry | null = null; // the last entry that may take match lines
  const lines = stdout.split('\n');
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.replace(/\s+$/, '');
    if (line === '') return;
    if (line.startsWith('filter ')) {
      current = null;
      const e = parseFilterLine(line, n);
      if (e) {
        out.push(e);
        current = e;
      }
      return;
    }
    if (/^\s/.test(line)) {
      const t = line.trim();
      const m = /^match ([0-9a-f]{8})\/([0-9a-f]{8}) at (nexthdr\+)?(-?\d+)$/.exec(t);
      if (m) {
        if (!current || current.kind !== 'u32') throw new ParseError(PARSER, 'match line outside a u32 filter', n);
        current.matches.push(decodeU32Match(m[1]!, m[2]!, Number(m[4]), m[3] ?? '', current.protocol, n));
        return;
      }
      if (t.startsWith('match ')) throw new ParseError(PARSER, `unreadable match ${JSON.stringify(t.slice(0, 60))}`, n);
      return; // actions, police, hardware counters: not modelled
    }
    throw new ParseError(PARSER, `expected "filter ..." but found ${JSON.stringify(line.slice(0, 40))}`, n);
  });
  return out;
}

function parseFilterLine(line: string, n: number): FilterEntry | null {
  const t = line.split(/\s+/);
  const val = (key: string): string | undefined => {
    const i = t.indexOf(key);
    return i >= 0 ? t[i + 1] : undefined;
  };
  const parent = val('parent');
  const protocol = val('protocol');
  const prefText = val('pref');
  const prefAt = t.indexOf('pref');
  const kind = prefAt >= 0 ? t[prefAt + 2] : undefined;
  if (!parent || !protocol || !prefText || !/^\d+$/.test(prefText) || !kind) {
    throw new ParseError(PARSER, 'filter line without parent, protocol, pref and kind', n);
  }
  const rest = t.slice(prefAt + 3);
  const get = (key: string): string | undefined => {
    const i = rest.indexOf(key);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  const chainText = get('chain');
  const handle = get('fh') ?? get('handle');
  if (handle === undefined) return null; // per-pref header
  // "*flowid" marks a terminal u32 node; the class is the same.
  const flowid = get('flowid') ?? get('*flowid') ?? get('classid');
  if (kind === 'u32' && /^[0-9a-f]+:$/.test(handle) && flowid === undefined) return null; // hash table
  const e: FilterEntry = { parent, protocol, pref: Number(prefText), kind, matches: [] };
  if (chainText !== undefined) e.chain = Number(chainText);
  e.handle = handle;
  if (flowid !== undefined) e.flowid = flowid;
  const order = get('order');
  if (order !== undefined) e.order = Number(order);
  return e;
}
