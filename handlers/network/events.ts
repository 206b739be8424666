/**
 * network.* events: the kinds this area emits, typed. Data names devices, addresses and bond
 * parameters only: nothing here is a secret. (The route contract attaches the request id and
 * logs, rather than throws, a failure to record.)
 */
import type { EventsBinding } from '../core/bindings';

export type NetworkEventKind =
  | 'network.interface.configured'
  | 'network.interface.updated'
  | 'network.bond.created'
  | 'network.bond.slaves_changed'
  | 'network.interface.unconfigured';

export function emitNetworkEvent(
  events: EventsBinding,
  kind: NetworkEventKind,
  data: Record<string, unknown>,
): Promise<void> {
  return events.send({ kind, data });
}
