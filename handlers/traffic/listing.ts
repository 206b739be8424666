import { idsFromRules } from './plan';
import type { DeviceTcState } from './reconcile';
import type { DeviceEntry, RuleEntry, TrafficListing } from './responses';
import type { StoredRule } from './store';

/**
 * The spec's listing object from what tc showed and what the DB holds. Pure, so it is tested
 * on recorded states.
 *
 * - devices: every device in `order` that tc could read, with its queue/class/filter arrays
 *   exactly as parsed (nothing synthesised: a never-up device shows `queue: []`, as tc does).
 * - rules: one entry per stored rule, in the DB's order, describing the root queue the rule
 *   lives on. With the rule applied that is our htb (qtype "htb", handler 1). When it could not be
 *   applied (foreign root, tc failed) the entry shows the root that IS there, so the drift is
 *   visible; a device that does not exist (any more) shows qtype "none", handler 0.
 * - ids: the reserved sentinel "0", then each rule's id, parallel to `rules`.
 */
export function buildListing(
  order: readonly string[],
  states: Readonly<Record<string, DeviceTcState | undefined>>,
  rules: readonly StoredRule[],
): TrafficListing {
  const devices: Record<string, DeviceEntry> = {};
  for (const name of order) {
    const s = states[name];
    if (s) devices[name] = { queue: s.queues, class: s.classes, filter: s.filters };
  }
  return { devices, rules: rules.map((r) => ruleEntry(r, states[r.device])), ids: idsFromRules(rules) };
}

export function ruleEntry(rule: StoredRule, state: DeviceTcState | undefined): RuleEntry {
  if (!state)
    return {
      name: rule.name,
      ip: rule.ip,
      rate: rule.rate,
      qtype: 'none',
      handler: 0,
      device: rule.device,
      owner: 'root',
      refcnt: '0',
      queue_details: {},
    };
  const root = state.queues.find((q) => q.owner === 'root');
  if (!root) {
    // tc hides the builtin noop root of a device that was never up (see state.ts withKernelRoot).
    return {
      name: rule.name,
      ip: rule.ip,
      rate: rule.rate,
      qtype: 'noop',
      handler: 0,
      device: rule.device,
      owner: 'root',
      refcnt: '1',
      queue_details: {},
    };
  }
  return {
    name: rule.name,
    ip: rule.ip,
    rate: rule.rate,
    qtype: root.qtype,
    handler: root.handler,
    device: rule.device,
    owner: root.owner,
    // tc prints refcnt only when it is not 1 (e.g. mq), so its absence means 1.
    refcnt: root.refcnt ?? '1',
    queue_details: root.details ?? {},
  };
}
