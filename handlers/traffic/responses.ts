import * as z from 'zod';

/**
 * Schemas of the traffic-control area: the spec's listing object (devices / rules / ids), the
 * parsed tc state it is built from (queue, class, filter entries), the stored rule, and the
 * create/destroy bodies.
 *
 * Field naming follows the spec's own style (snake_case: direct_packets_stat, queue_details).
 * Units are fixed and named here once, because tc mixes them: rule `rate` is megabytes per
 * second (the spec's unit); a parsed class `rate`/`ceil` is bits per second; `burst`/`cburst`
 * are bytes.
 */

// ---------------------------------------------------------------------------------------------
// Operands. These are also the plan's guard: tc has no `--`, so every value put into an argv must
// be impossible to read as an option or keyword. Each pattern below starts with a letter/digit.

/**
 * Linux interface name: 1..15 bytes (IFNAMSIZ - 1), no '/', ':' or whitespace (dev_valid_name).
 * We also refuse a leading '-' or '.', so a name can never look like a tc option or "."/"..".
 */
export const deviceName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$/, 'not a valid interface name (1-15 of A-Z a-z 0-9 _ . -)');

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
/**
 * Canonical dotted-quad IPv4 (no leading zeros), so a stored rule and the address decoded back
 * from tc compare as equal strings. IPv6 is not supported: the u32 plan matches IPv4 headers only.
 */
export const ipv4Address = z
  .string()
  .regex(new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`), 'not an IPv4 address (a.b.c.d)')
  .refine((ip) => ip !== '0.0.0.0' && ip !== '255.255.255.255', 'unspecified/broadcast address cannot be limited');

/** Highest rate accepted, MB/s: 800 Gbit/s, above any NIC this box has; guards typos like 1e9. */
export const MAX_RATE_MB = 100_000;

/**
 * Rule rate in megabytes per second (spec: "rate (number, in megabytes)"; 1 MB = 10^6 bytes, as
 * tc's own `mbps`). The kernel keeps whole bytes per second, so the rate must be at least 1 kB/s
 * and is rounded to whole bytes per second when applied.
 */
export const rateMb = z
  .number()
  .refine(Number.isFinite, 'rate must be a finite number of megabytes per second (MB/s)')
  .refine((r) => r >= 0.001, 'rate must be at least 0.001 MB/s (megabytes per second; 1 kB/s)')
  .refine((r) => r <= MAX_RATE_MB, `rate must be at most ${MAX_RATE_MB} MB/s (megabytes per second)`);

/**
 * Rule id: 1..4095. Id n owns htb class 1:<n hex> and u32 filter item 800::<n hex>; u32 item
 * numbers are 12 bits (tc refuses 800::1000) and 0 means "kernel picks", so 0 is the reserved
 * sentinel and 0xfff the top.
 */
export const MAX_RULE_ID = 0xfff;
export const ruleId = z.number().int().min(1).max(MAX_RULE_ID);

/** Rule names travel in URL paths (/network/traffic/control/{rule_name}/destroy): keep them plain. */
export const ruleName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'rule name: 1-64 of A-Z a-z 0-9 _ . - (not starting with a symbol)');

// ---------------------------------------------------------------------------------------------
// Queue (qdisc) entries: exactly the spec's fields.

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

// ---------------------------------------------------------------------------------------------
// Class entries (parsed from `tc [-s] class show dev X` text).

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

// ---------------------------------------------------------------------------------------------
// Filter entries (parsed from `tc -j filter show dev X`, headers dropped).

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

// ---------------------------------------------------------------------------------------------
// Stored rules, listing, requests and responses.

/** One rule as the DB keeps it. `id` never changes for the life of the rule. */
export const storedRule = z
  .object({
    name: ruleName,
    device: deviceName,
    ip: ipv4Address,
    rate: rateMb,
    id: ruleId,
  })
  .strict();
export type StoredRule = z.infer<typeof storedRule>;

/** ids[0]: the reserved sentinel, standing for id 0 (htb minor 0 is the qdisc itself; u32 item 0 = "auto"). */
export const RESERVED_ID = '0';

export const idList = z
  .array(z.string().regex(/^(0|[1-9][0-9]*)$/, 'ids are decimal integers'))
  .min(1)
  .refine((ids) => ids[0] === RESERVED_ID, `the first id must be the reserved sentinel "${RESERVED_ID}"`)
  .refine((ids) => ids.slice(1).every((id) => ruleId.safeParse(Number(id)).success), 'rule ids are 1..4095')
  .refine((ids) => new Set(ids).size === ids.length, 'ids must be unique');

export const deviceEntry = z
  .object({
    queue: z.array(queueEntry),
    class: z.array(classEntry),
    filter: z.array(filterEntry),
  })
  .strict();
export type DeviceEntry = z.infer<typeof deviceEntry>;

export const ruleEntryShape = z
  .object({
    name: ruleName.describe('the rule name'),
    // extra fields (issue 12): what the rule limits, as created
    ip: ipv4Address.describe('the IPv4 address whose traffic the rule limits'),
    rate: z.number().describe('the rate limit in megabytes per second (MB/s, 1 MB = 10^6 bytes), as created'),
    qtype: z.string(),
    handler: z.number().int(),
    device: z.string(),
    owner: z.enum(['root', 'parent']),
    refcnt: z.string(),
    queue_details: queueDetails,
  })
  .strict();
export type RuleEntry = z.infer<typeof ruleEntryShape>;

export const controlListAnswer = z
  .object({
    devices: z.record(z.string(), deviceEntry),
    rules: z.array(ruleEntryShape),
    /** parallel to `rules`, offset by the sentinel: ids[i + 1] is the id of rules[i] */
    ids: idList,
  })
  .strict();
export type TrafficListing = z.infer<typeof controlListAnswer>;

export const controlCreateAnswer = z
  .object({
    error: z.string().nullable(),
    name: z.string(),
    device: z.string(),
    ip: z.string(),
    rate: z.number(),
  })
  .strict();
export type CreateRuleResponse = z.infer<typeof controlCreateAnswer>;

export const controlDestroyAnswer = z.object({ id: ruleId }).strict();
export type DestroyRuleResponse = z.infer<typeof controlDestroyAnswer>;
