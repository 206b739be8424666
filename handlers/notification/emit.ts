import type { AppEvent, EventsBinding } from '../core/bindings';

/**
 * Record an event for delivery. The change it reports has already happened, so a failure to
 * record it is logged and swallowed: emitting never fails the request (delivery itself runs in
 * the host, after the response). Event data must never carry a secret.
 */
export async function emit(events: EventsBinding, event: AppEvent, requestId: string): Promise<void> {
  try {
    // The host's producer stores the request id beside the event (the fetch binding adds it too).
    const withRequest: AppEvent & { requestId: string } = { ...event, requestId };
    await events.send(withRequest);
  } catch (e) {
    console.error(`[${requestId}] event ${event.kind} was not recorded: ${(e as Error)?.message ?? String(e)}`);
  }
}
