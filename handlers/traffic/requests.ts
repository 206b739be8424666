/** What a client sends to the traffic routes. */
import * as z from 'zod';
import { MAX_RATE_MB, deviceName, ipv4Address, rateMb, ruleName } from './names';

/** A device a rule may be put on: not the loopback (the interface routes do not show it either). */
const ruleDeviceName = deviceName
  .refine((d) => d !== 'lo', 'lo (the loopback) cannot carry a traffic rule: name a network interface')
  .describe('network interface the rule limits traffic on (not lo)');

const RATE_HELP =
  'rate is in megabytes per second (MB/s, 1 MB = 10^6 bytes): a number or a numeric string, e.g. 12.5 or "12.5"';

/** `rate` as a client sends it: a number, or a numeric string (as network's `mtu`). */
const rateInput = z
  .preprocess(
    (v) => (typeof v === 'string' && /^\s*[0-9]+(?:\.[0-9]+)?\s*$/.test(v) ? Number(v) : v),
    z.number({ error: RATE_HELP }).pipe(rateMb),
  )
  .describe(
    `the rate limit in megabytes per second (MB/s, 1 MB = 10^6 bytes; 0.001 to ${MAX_RATE_MB}); a number or a numeric string`,
  );

/**
 * Seconds to confirm the change with POST /network/confirm before the host puts the rules and tc
 * back as they were (the network area's window; its bounds: 5 to 3600).
 */
const confirmWithin = z
  .preprocess(
    (v) => (typeof v === 'string' && /^\s*[0-9]+\s*$/.test(v) ? Number(v) : v),
    z.number().int().min(5).max(3600),
  )
  .optional()
  .describe('seconds (5-3600) to confirm the change with POST /network/confirm before it is rolled back on its own');

export const createRuleBody = z
  .object({
    name: ruleName,
    device: ruleDeviceName,
    ip: ipv4Address,
    rate: rateInput,
    confirmWithin,
  })
  .strict();
export type CreateRuleBody = z.infer<typeof createRuleBody>;

/** POST /network/traffic/control/{rule_name}/destroy */
export const destroyRuleParams = z.object({ rule_name: ruleName });
/** The usage example also sends `{"name": ...}`: accepted when it names the same rule. */
export const destroyRuleBody = z.object({ name: ruleName.optional(), confirmWithin }).strict();
