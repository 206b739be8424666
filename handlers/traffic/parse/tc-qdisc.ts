import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { isJsonObject, parseJsonMulti, type JsonObject, type JsonValue } from './json-multi';
import { parseTcHandle } from './tc-units';

const PARSER = 'tc-qdisc';

// `tc -j qdisc show` entries: exactly the spec's fields.

export const queueDetails = z
  .object({
    bands: z.number().int().optional(),
    priomap: z.array(z.number().int()).optional(),
    r2q: z.number().int().optional(),
    /** htb default class minor, as tc prints it: hex text such as "0xba11" */
    default: z.string().optional(),
    direct_packets_stat: z.number().int().optional(),
    direct_qlen: z.number().int().optional(),
  })
  .strict();
export type QueueDetails = z.infer<typeof queueDetails>;

export const queueEntry = z
  .object({
    /** qdisc kind: htb, mq, pfifo_fast, noqueue, ... */
    qtype: z.string().min(1),
    /** major number of the qdisc handle, decoded from tc's hex ("1:" -> 1, "8001:" -> 32769) */
    handler: z.number().int().min(0).max(0xffff),
    device: z.string().min(1),
    /** root: attached at the device root; parent: under a class or an mq queue */
    owner: z.enum(['root', 'parent']),
    /** tc prints refcnt only when it is not 1 (mq roots and children have none) */
    refcnt: z.string().optional(),
    details: queueDetails.optional(),
  })
  .strict();
export type QueueEntry = z.infer<typeof queueEntry>;

/**
 * `tc -j qdisc show [dev X]` -> the spec's queue entries.
 *
 * Real 6.1 shapes (fixtures/tc): `{"kind":"htb","handle":"1:","root":true,"refcnt":3,
 * "options":{"r2q":10,"default":"0x30",...}}`; mq children carry `"parent":":4"` and no refcnt;
 * without `dev X` every entry also has `"dev"`. With `dev X` it does not, so the caller passes
 * the device it asked about.
 *
 * Only the option fields the spec names are kept (bands, priomap, r2q, default,
 * direct_packets_stat, direct_qlen); statistics from `-s` and other options are dropped.
 */
export function parseTcQdisc(stdout: string, device?: string): QueueEntry[] {
  const doc = parseJsonMulti(stdout, PARSER);
  if (!Array.isArray(doc)) throw new ParseError(PARSER, 'expected a JSON array of qdiscs', 1);
  return doc.map((item) => toQueue(item, device));
}

function toQueue(item: JsonValue, device: string | undefined): QueueEntry {
  if (!isJsonObject(item)) throw new ParseError(PARSER, 'qdisc entry is not an object', 1);
  const at = item.line;
  const kind = item.one('kind', PARSER);
  if (typeof kind !== 'string' || kind === '') throw new ParseError(PARSER, 'qdisc without "kind"', at);

  const handleText = item.one('handle', PARSER);
  const handle = typeof handleText === 'string' ? parseTcHandle(handleText) : null;
  if (!handle || handle.minor !== 0) {
    throw new ParseError(PARSER, `qdisc ${kind}: bad handle ${JSON.stringify(handleText ?? null)}`, at);
  }

  const root = item.one('root', PARSER);
  const parent = item.one('parent', PARSER);
  let owner: QueueEntry['owner'];
  if (root === true) owner = 'root';
  else if (typeof parent === 'string' && parseTcHandle(parent)) owner = 'parent';
  else throw new ParseError(PARSER, `qdisc ${kind}: neither "root" nor a valid "parent"`, at);

  const dev = item.one('dev', PARSER);
  if (dev !== undefined && typeof dev !== 'string') throw new ParseError(PARSER, 'qdisc "dev" is not a string', at);
  const name = dev ?? device;
  if (!name) throw new ParseError(PARSER, `qdisc ${kind}: no "dev" and no device given`, at);

  const out: QueueEntry = { qtype: kind, handler: handle.major, device: name, owner };

  const refcnt = item.one('refcnt', PARSER);
  if (refcnt !== undefined) {
    if (typeof refcnt !== 'number' || !Number.isInteger(refcnt))
      throw new ParseError(PARSER, 'refcnt is not an integer', at);
    // The spec types refcnt as a string.
    out.refcnt = String(refcnt);
  }

  const options = item.one('options', PARSER);
  if (options !== undefined) {
    if (!isJsonObject(options)) throw new ParseError(PARSER, `qdisc ${kind}: "options" is not an object`, at);
    const details = toDetails(options, kind);
    if (Object.keys(details).length > 0) out.details = details;
  }
  return out;
}

function toDetails(o: JsonObject, kind: string): QueueDetails {
  const d: QueueDetails = {};
  const int = (key: 'bands' | 'r2q' | 'direct_packets_stat' | 'direct_qlen') => {
    const v = o.one(key, PARSER);
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isInteger(v))
      throw new ParseError(PARSER, `qdisc ${kind}: ${key} is not an integer`, o.line);
    d[key] = v;
  };
  int('bands');
  const priomap = o.one('priomap', PARSER);
  if (priomap !== undefined) {
    if (!Array.isArray(priomap) || !priomap.every((n) => typeof n === 'number' && Number.isInteger(n))) {
      throw new ParseError(PARSER, `qdisc ${kind}: priomap is not a list of integers`, o.line);
    }
    d.priomap = priomap as number[];
  }
  int('r2q');
  const def = o.one('default', PARSER);
  if (def !== undefined) {
    // tc prints the htb default class as hex text ("0x30"); kept verbatim so nobody mistakes
    // it for decimal 30.
    if (typeof def !== 'string' || !/^0x[0-9a-f]+$|^0$/.test(def)) {
      throw new ParseError(PARSER, `qdisc ${kind}: default is not hex text`, o.line);
    }
    d.default = def;
  }
  int('direct_packets_stat');
  int('direct_qlen');
  return d;
}
