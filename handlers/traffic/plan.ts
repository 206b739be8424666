import { issuesOf, issuesText } from '../core/errors';
import * as z from 'zod';
import { deviceName, ipv4Address, MAX_RULE_ID, rateMb, RESERVED_ID, ruleId } from './names';
import type { ClassEntry } from './parse/tc-class';
import type { FilterEntry } from './parse/tc-filter';
import type { QueueEntry } from './parse/tc-qdisc';
import type { StoredRule } from './stored-rule';
import { formatClassId, parseTcHandle } from './parse/tc-units';

/**
 * The exact tc argv arrays Ballast runs for traffic control, as pure functions.
 *
 * How a rule is laid out on a device (egress of `device`, i.e. traffic this box SENDS):
 *
 *   qdisc htb 1: root default 0xba11          <- "ours": see isOurRoot()
 *   class htb 1:<id hex>  rate R ceil R       <- one per rule, directly under the qdisc
 *   filter parent 1: protocol ip pref 1 u32
 *          handle 800::<id hex>  match ip dst <ip>/32  flowid 1:<id hex>
 *
 * - Only the destination address is matched: the limit is on traffic this box sends TO that IP.
 *   Matching the source as well would only ever match this box's own address(es) and break when
 *   the box has several; traffic the peer sends to us arrives on ingress, which htb does not
 *   shape (that would need an ifb redirect; not planned).
 * - Unclassified traffic goes to the default class 0xba11, which is never created: htb then
 *   sends it directly, unshaped. So only the listed IPs are limited.
 * - rate == ceil, and no parent class: a rule is a hard cap, it never borrows.
 * - The filter handle is pinned to the rule id (u32 item numbers are 12-bit: 1..0xfff) so a rule's
 *   filter can be deleted by handle; letting the kernel pick would force a list-and-search first.
 *
 * tc has no `--`; instead every operand is validated here (device name, IPv4, rate, id) before it
 * reaches an argv, so none can be read as an option or keyword. Callers get a TrafficPlanError.
 */

export const TC = '/usr/sbin/tc';
export type Argv = string[];

/** The htb root we install: handle 1:, default class 0xba11 ("Ballast"; tc reads `ba11` as hex). */
export const ROOT_MAJOR = 1;
export const DEFAULT_MINOR = 0xba11;
/** All rule filters share one u32 instance at this pref, in its root hash table 800:. */
export const FILTER_PREF = 1;
export const U32_TABLE = '800';

/** 10 ms worth of the rate, at least 16 KiB: see burstBytes(). */
const BURST_WINDOW_S = 0.01;
const BURST_MIN_BYTES = 16 * 1024;

export class TrafficPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrafficPlanError';
  }
}

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    // String() for numbers so NaN/Infinity read as themselves (JSON would print null).
    const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
    throw new TrafficPlanError(`${issuesText(issuesOf(what, r.error))} (got ${shown})`);
  }
  return r.data;
}

const device = (d: string) => check(deviceName, d, 'device');

// ---------------------------------------------------------------------------------------------
// Reading state. The fixtures are recorded with exactly these argv, so replay matches them.

/** JSON: qdiscs are printed as JSON by every iproute2 we meet. */
export const showQdiscArgv = (dev: string): Argv => [TC, '-j', 'qdisc', 'show', 'dev', device(dev)];
/**
 * Text on purpose: 6.1 ignores -j for classes, and 6.2+ still prints text without -j (its small
 * differences, such as `leaf 10` without the colon, are read by tc-class.ts).
 */
export const showClassArgv = (dev: string): Argv => [TC, 'class', 'show', 'dev', device(dev)];
/** JSON, read with the duplicate-keeping reader (see tc-filter.ts). */
export const showFilterArgv = (dev: string): Argv => [TC, '-j', 'filter', 'show', 'dev', device(dev)];

// ---------------------------------------------------------------------------------------------
// Names of a rule's objects.

export function classIdFor(id: number): string {
  return formatClassId(ROOT_MAJOR, check(ruleId, id, 'rule id'));
}

export function filterHandleFor(id: number): string {
  return `${U32_TABLE}::${check(ruleId, id, 'rule id').toString(16)}`;
}

/** Bytes per second the kernel will hold for `rateMB` (1 MB = 10^6 bytes, like tc's `mbps`). */
export function rateBytesPerSec(rateMB: number): number {
  return Math.round(check(rateMb, rateMB, 'rate') * 1_000_000);
}

/**
 * The tc rate operand. 1 MB/s = 8 mbit (tc: mbit = 10^6 bit/s). Written in the largest unit that
 * is exact, so the argv stays readable ("8mbit", "20mbit", "4500kbit") and tc's parse (bits / 8
 * -> whole bytes) gives back exactly rateBytesPerSec().
 */
export function rateArg(rateMB: number): string {
  const bits = rateBytesPerSec(rateMB) * 8;
  if (bits % 1_000_000 === 0) return `${bits / 1_000_000}mbit`;
  if (bits % 1_000 === 0) return `${bits / 1_000}kbit`;
  return `${bits}bit`;
}

/**
 * burst (and cburst): 10 ms of the rate, at least 16 KiB. tc's own default is rate/HZ + MTU,
 * which with the 1 GHz psched clock of current kernels is about one MTU; that under-delivers at
 * high rates because the qdisc is not woken exactly on time, and it makes the argv depend on the
 * host. 10 ms absorbs wake-up jitter while keeping a rule's burst short compared to a second;
 * the floor lets a slow class still pass a few (or two jumbo) frames back to back.
 */
export function burstBytes(rateMB: number): number {
  return Math.max(BURST_MIN_BYTES, Math.ceil(rateBytesPerSec(rateMB) * BURST_WINDOW_S));
}

// ---------------------------------------------------------------------------------------------
// The root qdisc.

export type RootState = { kind: 'ours' } | { kind: 'replaceable'; qtype: string } | { kind: 'foreign'; reason: string };

/**
 * Is the device's root qdisc the htb Ballast installs? Recognised by the two things we set and
 * nobody picks by accident together: handle 1: and default class 0xba11. htb's own default is 0,
 * and hand-written setups use small defaults (0x10, 0x30...). Everything under that root is then
 * ours (classes and filters are read back and reconciled against the DB).
 */
export function isOurRoot(q: QueueEntry): boolean {
  return (
    q.owner === 'root' &&
    q.qtype === 'htb' &&
    q.handler === ROOT_MAJOR &&
    q.details?.default !== undefined &&
    parseInt(q.details.default, 16) === DEFAULT_MINOR
  );
}

export function rootState(dev: string, queues: readonly QueueEntry[]): RootState {
  const root = queues.find((q) => q.owner === 'root' && q.device === dev);
  if (!root) {
    // Every device has a root qdisc (noqueue/noop at least); none means we read the wrong thing.
    return { kind: 'foreign', reason: `no root qdisc was listed for device ${dev}` };
  }
  if (isOurRoot(root)) return { kind: 'ours' };
  if (root.qtype === 'htb') {
    return {
      kind: 'foreign',
      reason:
        `device ${dev} already has an htb root qdisc (handle ${root.handler.toString(16)}:, ` +
        `default ${root.details?.default ?? 'unknown'}) that Ballast did not create; ` +
        `refusing to replace it (remove it by hand if it is not needed)`,
    };
  }
  // The kernel attaches its default root (noqueue, pfifo_fast, fq_codel, mq, noop) with handle
  // 0:, and a qdisc an administrator adds always gets a non-zero handle (tc turns `handle 0:`
  // into an automatic 8001:...). So a non-zero handle means someone set this root up on purpose
  // (fq, cake, tbf...), and replacing it would silently drop their configuration.
  if (root.handler !== 0) {
    return {
      kind: 'foreign',
      reason:
        `device ${dev} has a ${root.qtype} root qdisc (handle ${root.handler.toString(16)}:) that an administrator ` +
        `set up, not the kernel's default; refusing to replace it (remove it by hand if it is not needed)`,
    };
  }
  return { kind: 'replaceable', qtype: root.qtype };
}

export type EnsureRootPlan = { ok: true; argv: Argv[] } | { ok: false; reason: string };

/**
 * Commands that make our htb the device's root. None when it already is. `replace` (not add)
 * because a root always exists (noqueue, pfifo_fast, mq...) and add would fail on it. Only the
 * kernel's default root is replaced: any root an administrator made (htb or not) is refused,
 * because replacing it would silently drop someone's shaping.
 */
export function planEnsureRoot(dev: string, queues: readonly QueueEntry[]): EnsureRootPlan {
  const d = device(dev);
  const state = rootState(d, queues);
  if (state.kind === 'ours') return { ok: true, argv: [] };
  if (state.kind === 'foreign') return { ok: false, reason: state.reason };
  return {
    ok: true,
    argv: [
      [
        TC,
        'qdisc',
        'replace',
        'dev',
        d,
        'root',
        'handle',
        `${ROOT_MAJOR}:`,
        'htb',
        'default',
        DEFAULT_MINOR.toString(16),
      ],
    ],
  };
}

/** Drop our root (only when no rule is left on the device; the caller checks both). */
export function planRemoveRoot(dev: string): Argv[] {
  return [[TC, 'qdisc', 'del', 'dev', device(dev), 'root']];
}

// ---------------------------------------------------------------------------------------------
// Rules.

export type RuleTarget = Pick<StoredRule, 'device' | 'ip' | 'rate' | 'id'>;

/**
 * `add` for a new rule (an existing class/filter with that id is then an error, surfacing a
 * stale leftover instead of overwriting it); `replace` when re-applying (reconcile), which
 * creates or overwrites.
 */
export type ApplyMode = 'add' | 'replace';

export function planClass(rule: RuleTarget, mode: ApplyMode = 'add'): Argv {
  const d = device(rule.device);
  const rate = rateArg(rule.rate);
  const burst = `${burstBytes(rule.rate)}b`;
  return [
    TC,
    'class',
    mode,
    'dev',
    d,
    'parent',
    `${ROOT_MAJOR}:`,
    'classid',
    classIdFor(rule.id),
    'htb',
    'rate',
    rate,
    'ceil',
    rate,
    'burst',
    burst,
    'cburst',
    burst,
  ];
}

export function planFilter(rule: RuleTarget, mode: ApplyMode = 'add'): Argv {
  const d = device(rule.device);
  const ip = check(ipv4Address, rule.ip, 'ip');
  return [
    TC,
    'filter',
    mode,
    'dev',
    d,
    'parent',
    `${ROOT_MAJOR}:`,
    'protocol',
    'ip',
    'prio',
    String(FILTER_PREF),
    'handle',
    filterHandleFor(rule.id),
    'u32',
    'match',
    'ip',
    'dst',
    `${ip}/32`,
    'flowid',
    classIdFor(rule.id),
  ];
}

/** Class first: a filter pointing at a class that does not exist yet would classify to nothing. */
export function planAddRule(rule: RuleTarget, mode: ApplyMode = 'add'): Argv[] {
  return [planClass(rule, mode), planFilter(rule, mode)];
}

/** Filter first: the kernel refuses to delete a class a filter still points at ("class in use"). */
export function planRemoveRule(rule: Pick<StoredRule, 'device' | 'id'>): Argv[] {
  const d = device(rule.device);
  return [
    [
      TC,
      'filter',
      'del',
      'dev',
      d,
      'parent',
      `${ROOT_MAJOR}:`,
      'protocol',
      'ip',
      'prio',
      String(FILTER_PREF),
      'handle',
      filterHandleFor(rule.id),
      'u32',
    ],
    [TC, 'class', 'del', 'dev', d, 'parent', `${ROOT_MAJOR}:`, 'classid', classIdFor(rule.id)],
  ];
}

/**
 * Everything to create a rule on a device whose current qdiscs are `queues`: our root if needed,
 * then class and filter. Refuses (ok: false) on a foreign htb root.
 */
export function planCreateRule(rule: RuleTarget, queues: readonly QueueEntry[]): EnsureRootPlan {
  const root = planEnsureRoot(rule.device, queues);
  if (!root.ok) return root;
  return { ok: true, argv: [...root.argv, ...planAddRule(rule, 'add')] };
}

// ---------------------------------------------------------------------------------------------
// Ids.
//
// The listing's `ids` is [RESERVED_ID, id of rules[0], id of rules[1], ...]: decimal strings,
// one per rule after the sentinel. A rule keeps its id for life (the DB stores it), so removing
// a rule removes only its own entry and every other rule keeps its id, class and filter handle.
// Freed ids are reused (smallest first), which keeps class numbers small and readable. There is
// one ids list for the whole listing, so an id is unique across devices even though tc would
// allow the same class number on two devices: "the id the rule occupied" then names one rule.

/** The listing's ids for rules in listing order. */
export function idsFromRules(rules: readonly Pick<StoredRule, 'id'>[]): string[] {
  return [RESERVED_ID, ...rules.map((r) => String(r.id))];
}

/** The ids list without `id`. The sentinel can never be removed. */
export function removeId(ids: readonly string[], id: number): string[] {
  if (String(id) === RESERVED_ID) throw new TrafficPlanError('the reserved id cannot be removed');
  const i = ids.indexOf(String(id));
  if (i <= 0) throw new TrafficPlanError(`id ${id} is not in use`);
  return [...ids.slice(0, i), ...ids.slice(i + 1)];
}

/**
 * Minors of htb classes and u32 items already present under our root on a device. A new rule
 * must avoid them too: a leftover class from a half-finished destroy would otherwise make
 * `class add` fail (or, worse, a leftover filter send the new rule's traffic elsewhere).
 */
export function idsInUseOnDevice(classes: readonly ClassEntry[], filters: readonly FilterEntry[]): number[] {
  const used = new Set<number>();
  for (const c of classes) {
    const h = parseTcHandle(c.classid);
    if (h && h.major === ROOT_MAJOR) used.add(h.minor);
  }
  for (const f of filters) {
    const item = u32ItemOf(f);
    if (item !== null) used.add(item);
  }
  return [...used];
}

/** The u32 item number of one of our filter handles ("800::a" -> 10), else null. */
export function u32ItemOf(f: FilterEntry): number | null {
  if (f.kind !== 'u32' || f.handle === undefined) return null;
  const m = /^([0-9a-f]+):([0-9a-f]*):([0-9a-f]+)$/.exec(f.handle);
  if (!m || m[1] !== U32_TABLE) return null;
  return parseInt(m[3]!, 16);
}

/**
 * The smallest free rule id, not in `ids` (the listing's ids, sentinel included) and not in
 * `alsoTaken` (see idsInUseOnDevice). Throws when all 4095 are taken.
 */
export function nextFreeId(ids: readonly string[], alsoTaken: Iterable<number> = []): number {
  const taken = new Set<number>(ids.map(Number));
  for (const n of alsoTaken) taken.add(n);
  for (let id = 1; id <= MAX_RULE_ID; id++) if (!taken.has(id)) return id;
  throw new TrafficPlanError(`all ${MAX_RULE_ID} traffic control ids are in use`);
}
