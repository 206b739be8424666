import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { parseTcHandle, parseTcRate, parseTcSize } from './tc-units';

const PARSER = 'tc-class';

export const classStats = z
  .object({
    bytes: z.number().int(),
    packets: z.number().int(),
    dropped: z.number().int(),
    overlimits: z.number().int(),
    requeues: z.number().int(),
    backlog_bytes: z.number().int(),
    backlog_packets: z.number().int(),
    /** htb only */
    lended: z.number().int().optional(),
    borrowed: z.number().int().optional(),
    giants: z.number().int().optional(),
    /** htb only; may be negative (a class that overdrew its bucket) */
    tokens: z.number().int().optional(),
    ctokens: z.number().int().optional(),
  })
  .strict();
export type ClassStats = z.infer<typeof classStats>;

export const classEntry = z
  .object({
    kind: z.string().min(1),
    /** as tc prints it, minor in hex: "1:a" is class 1:0xa */
    classid: z.string().min(1),
    /** parent class id; null when tc prints `root` (attached directly to the qdisc) */
    parent: z.string().nullable(),
    /** handle of the qdisc attached below this class, e.g. "10:" */
    leaf: z.string().optional(),
    prio: z.number().int().optional(),
    /** bits per second, as tc shows it (tc's display rounds, e.g. 12345678 bit -> 12345Kbit) */
    rate: z.number().int().nonnegative().optional(),
    ceil: z.number().int().nonnegative().optional(),
    /** bytes, as tc shows it ("15Kb" = 15360: tc's display rounds to the nearest KiB/MiB) */
    burst: z.number().int().nonnegative().optional(),
    cburst: z.number().int().nonnegative().optional(),
    stats: classStats.optional(),
  })
  .strict();
export type ClassEntry = z.infer<typeof classEntry>;

/**
 * `tc [-s] class show dev X` (text) -> class entries.
 *
 * Why text: iproute2 before 6.2 (Debian 12 ships 6.1) has no JSON for classes; `-j` is
 * accepted and ignored, so the text is all there is. The plan reads classes without `-j`, which
 * prints this same text on newer versions too. A JSON document here is refused with a clear
 * message rather than guessed at.
 *
 * Line shapes (iproute2 6.1, see fixtures/tc):
 *   class htb 1:10 parent 1:1 leaf 10: prio 0 rate 8Mbit ceil 16Mbit burst 15Kb cburst 1600b
 *   class htb 1:1 root rate 100Mbit ceil 100Mbit burst 1600b cburst 1600b
 * and with -s, indented statistics lines after each class, then a blank line:
 *    Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)
 *    backlog 0b 0p requeues 0
 *    lended: 0 borrowed: 0 giants: 0
 *    tokens: 240000 ctokens: 12500
 *
 * htb classes are read strictly (an unknown option is an error: we would otherwise misreport a
 * rate). Other kinds (mq, fq_codel, ...) keep only their id, parent and leaf.
 */
export function parseTcClass(stdout: string): ClassEntry[] {
  if (/^\s*[[{]/.test(stdout)) {
    throw new ParseError(
      PARSER,
      'JSON class output (iproute2 >= 6.2) is not read here; run `tc class show` without -j',
      1,
    );
  }
  const out: ClassEntry[] = [];
  let current: { entry: ClassEntry; stats: Partial<ClassStats>; line: number } | null = null;

  const finish = () => {
    if (!current) return;
    const s = current.stats;
    if (Object.keys(s).length > 0) {
      // A -s block must at least carry the "Sent" and "backlog" lines; half a block means we
      // misread the layout.
      for (const k of ['bytes', 'backlog_bytes'] as const) {
        if (s[k] === undefined)
          throw new ParseError(PARSER, `statistics of class ${current.entry.classid} lack "${k}"`, current.line);
      }
      current.entry.stats = s as ClassStats;
    }
    out.push(current.entry);
    current = null;
  };

  const lines = stdout.split('\n');
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.replace(/\s+$/, '');
    if (line === '') return;
    if (line.startsWith('class ')) {
      finish();
      current = { entry: parseHeader(line, n), stats: {}, line: n };
      return;
    }
    if (/^\s/.test(line)) {
      if (!current) throw new ParseError(PARSER, 'statistics line before any class', n);
      parseStatsLine(line.trim(), current.entry.kind, current.stats, n);
      return;
    }
    throw new ParseError(PARSER, `expected "class ..." but found ${JSON.stringify(line.slice(0, 40))}`, n);
  });
  finish();
  return out;
}

function parseHeader(line: string, n: number): ClassEntry {
  const t = line.split(/\s+/);
  // t[0] === 'class'
  const kind = t[1];
  const classid = t[2];
  if (!kind || !classid || !parseTcHandle(classid)) {
    throw new ParseError(PARSER, 'class line without a kind and a class id', n);
  }
  let i = 3;
  const next = (what: string): string => {
    const v = t[i + 1];
    if (v === undefined) throw new ParseError(PARSER, `class ${classid}: "${what}" without a value`, n);
    i += 2;
    return v;
  };

  if (t[i] === 'dev') next('dev'); // only present when listing without `dev X`; the caller knows the device
  let parent: string | null;
  if (t[i] === 'root') {
    parent = null;
    i++;
  } else if (t[i] === 'parent') {
    parent = next('parent');
    if (!parseTcHandle(parent))
      throw new ParseError(PARSER, `class ${classid}: bad parent ${JSON.stringify(parent)}`, n);
  } else {
    throw new ParseError(PARSER, `class ${classid}: expected "root" or "parent"`, n);
  }
  const entry: ClassEntry = { kind, classid, parent };
  if (t[i] === 'leaf') {
    // 6.1 prints "leaf 10:"; later versions print the major without the colon. Store "10:".
    const leaf = next('leaf');
    if (!/^[0-9a-f]+:?$/.test(leaf))
      throw new ParseError(PARSER, `class ${classid}: bad leaf ${JSON.stringify(leaf)}`, n);
    entry.leaf = leaf.endsWith(':') ? leaf : `${leaf}:`;
  }

  if (kind !== 'htb') return entry;

  const num = (key: string, v: string): number => {
    if (!/^-?[0-9]+$/.test(v))
      throw new ParseError(PARSER, `class ${classid}: ${key} ${JSON.stringify(v)} is not a number`, n);
    return Number(v);
  };
  const rate = (key: string, v: string): number => {
    const r = parseTcRate(v);
    if (r === null) throw new ParseError(PARSER, `class ${classid}: ${key} ${JSON.stringify(v)} is not a rate`, n);
    return r;
  };
  // "-d" prints "burst 1600b/1 mpu 0b"; keep the size before the cell.
  const size = (key: string, v: string): number => {
    const s = parseTcSize(v.split('/')[0]!);
    if (s === null) throw new ParseError(PARSER, `class ${classid}: ${key} ${JSON.stringify(v)} is not a size`, n);
    return s;
  };

  while (i < t.length) {
    const key = t[i]!;
    switch (key) {
      case 'prio':
        entry.prio = num(key, next(key));
        break;
      case 'rate':
        entry.rate = rate(key, next(key));
        break;
      case 'ceil':
        entry.ceil = rate(key, next(key));
        break;
      case 'burst':
        entry.burst = size(key, next(key));
        break;
      case 'cburst':
        entry.cburst = size(key, next(key));
        break;
      // Printed for classes made with these options or with -d; understood, not modelled.
      case 'quantum':
      case 'overhead':
      case 'level':
        num(key, next(key));
        break;
      case 'linklayer':
      case 'mpu':
        next(key);
        break;
      default:
        throw new ParseError(PARSER, `class ${classid}: unknown htb option ${JSON.stringify(key)}`, n);
    }
  }
  for (const k of ['rate', 'ceil', 'burst', 'cburst'] as const) {
    if (entry[k] === undefined) throw new ParseError(PARSER, `htb class ${classid} has no ${k}`, n);
  }
  return entry;
}

const SENT = /^Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) requeues (\d+)\)$/;
const BACKLOG = /^backlog (\S+) (\d+)p requeues (\d+)$/;
const RATE_EST = /^rate (\S+) (\d+)pps(?: backlog (\S+) (\d+)p requeues (\d+))?$/;
const LENDED = /^lended: (\d+) borrowed: (\d+) giants: (\d+)$/;
const TOKENS = /^tokens: (-?\d+) ctokens: (-?\d+)$/;

function parseStatsLine(line: string, kind: string, s: Partial<ClassStats>, n: number): void {
  let m: RegExpExecArray | null;
  if ((m = SENT.exec(line))) {
    s.bytes = Number(m[1]);
    s.packets = Number(m[2]);
    s.dropped = Number(m[3]);
    s.overlimits = Number(m[4]);
    s.requeues = Number(m[5]);
    return;
  }
  const backlog = (size: string, packets: string) => {
    const b = parseTcSize(size);
    if (b === null) throw new ParseError(PARSER, `backlog ${JSON.stringify(size)} is not a size`, n);
    s.backlog_bytes = b;
    s.backlog_packets = Number(packets);
  };
  if ((m = BACKLOG.exec(line))) return backlog(m[1]!, m[2]!);
  // A rate estimator line (only with `tc class add ... estimator`); the rate is not modelled.
  if ((m = RATE_EST.exec(line))) {
    if (m[3] !== undefined) backlog(m[3], m[4]!);
    return;
  }
  if (kind === 'htb') {
    if ((m = LENDED.exec(line))) {
      s.lended = Number(m[1]);
      s.borrowed = Number(m[2]);
      s.giants = Number(m[3]);
      return;
    }
    if ((m = TOKENS.exec(line))) {
      s.tokens = Number(m[1]);
      s.ctokens = Number(m[2]);
      return;
    }
    throw new ParseError(PARSER, `unknown htb statistics line ${JSON.stringify(line.slice(0, 40))}`, n);
  }
  // Other kinds print their own xstats; they are not modelled.
}
