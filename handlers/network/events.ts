/**
 * network.* events. The change has already happened when one is emitted, so failing to record
 * it is logged, never turned into an error for a request whose change succeeded. Data names
 * devices, addresses and bond parameters only: nothing here is a secret.
 */
import type { AppEvent, EventsBinding } from '../core/bindings.ts';

export type NetworkEventKind =
  | 'network.interface.configured'
  | 'network.interface.updated'
  | 'network.bond.created'
  | 'network.bond.slaves_changed'
  | 'network.interface.unconfigured';

export async function emitNetworkEvent(events: EventsBinding, kind: NetworkEventKind, data: Record<string, unknown>, requestId: string): Promise<void> {
  try {
    // the host's producer stores the request id beside the event
    const event: AppEvent & { requestId: string } = { kind, data, requestId };
    await events.send(event);
  } catch (e) {
    console.error(`[${requestId}] event ${kind} was not recorded: ${e instanceof Error ? e.message : String(e)}`);
  }
}
