/**
 * What the traffic routes answer: the spec's listing object (devices / rules / ids), built from
 * the parsed tc state (the queue, class and filter entries beside their parsers in parse/), and
 * the create/destroy answers.
 *
 * Field naming follows the spec's own style (snake_case: direct_packets_stat, queue_details).
 * Units are fixed and named once, because tc mixes them: rule `rate` is megabytes per second
 * (the spec's unit); a parsed class `rate`/`ceil` is bits per second; `burst`/`cburst` are bytes.
 */
import * as z from 'zod';
import { RESERVED_ID, ipv4Address, ruleId, ruleName } from './names';
import { classEntry } from './parse/tc-class';
import { filterEntry } from './parse/tc-filter';
import { queueDetails, queueEntry } from './parse/tc-qdisc';

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

export const ruleEntry = z
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
export type RuleEntry = z.infer<typeof ruleEntry>;

export const trafficListing = z
  .object({
    devices: z.record(z.string(), deviceEntry),
    rules: z.array(ruleEntry),
    /** parallel to `rules`, offset by the sentinel: ids[i + 1] is the id of rules[i] */
    ids: idList,
  })
  .strict();
export type TrafficListing = z.infer<typeof trafficListing>;

export const createRuleAnswer = z
  .object({
    error: z.string().nullable(),
    name: z.string(),
    device: z.string(),
    ip: z.string(),
    rate: z.number(),
  })
  .strict();
export type CreateRuleAnswer = z.infer<typeof createRuleAnswer>;

export const destroyRuleAnswer = z.object({ id: ruleId }).strict();
export type DestroyRuleAnswer = z.infer<typeof destroyRuleAnswer>;
