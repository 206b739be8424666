/**
 * The rule as the DB keeps it (table `traffic_rules`), on its own so the planner and the store
 * can both name it without importing each other.
 */
import * as z from 'zod';
import { deviceName, ipv4Address, rateMb, ruleId, ruleName } from './names';

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
