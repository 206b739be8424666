import type { AppEvent, EventsBinding } from '../core/bindings';

/**
 * Record an fs event once the change has happened. The change cannot be undone by a failure to
 * record it, so that failure is logged and swallowed: emitting never fails the request.
 * Kinds follow the README's catalogue (`fs.filesystem.created`, `fs.filesystem.mounted`, ...).
 */
export async function emit(events: EventsBinding, event: AppEvent, requestId: string): Promise<void> {
  try {
    const withRequest: AppEvent & { requestId: string } = { ...event, requestId };
    await events.send(withRequest);
  } catch (e) {
    console.error(`[${requestId}] event ${event.kind} was not recorded: ${(e as Error)?.message ?? String(e)}`);
  }
}
