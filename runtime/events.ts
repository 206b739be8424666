import { randomUUID } from 'node:crypto';
import type { AppEvent, EventsBinding } from '../handlers/core/bindings';
import type { SqliteDb } from './db/database';

/** `<area>.<object>.<past-tense verb>` (docs/area-conventions.md); `_` joins words in a segment. */
const KIND_PATTERN = /^[a-z][a-z0-9]*\.[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/**
 * EVENTS producer: an event and one pending delivery per enabled agent are written in one
 * transaction (the outbox), so nothing is lost if the process dies right after. Delivery runs
 * elsewhere and never blocks the request that emitted the event.
 */
export class EventsProducer implements EventsBinding {
  private readonly insertEvent;
  private readonly insertDeliveries;
  private readonly nextSeq;
  private listeners: (() => void)[] = [];

  constructor(private readonly db: SqliteDb) {
    this.insertEvent = db.prepare('INSERT INTO events (id, seq, kind, at, request_id, data) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertDeliveries = db.prepare(
      "INSERT INTO deliveries (event_id, agent_id, state, attempts, next_attempt_at) SELECT ?, id, 'pending', 0, ? FROM notification_agents WHERE enabled = 1",
    );
    this.nextSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM events');
  }

  onEvent(listener: () => void): void {
    this.listeners.push(listener);
  }

  async send(event: AppEvent & { requestId?: string }): Promise<void> {
    this.record(event);
  }

  record(event: AppEvent & { requestId?: string }): string {
    if (typeof event?.kind !== 'string' || !KIND_PATTERN.test(event.kind))
      throw new Error(`bad event kind: ${String(event?.kind)}`);
    const id = randomUUID();
    const now = Date.now();
    this.db.transaction(() => {
      const { seq } = this.nextSeq.get() as { seq: number };
      this.insertEvent.run(id, seq, event.kind, now, event.requestId ?? null, JSON.stringify(event.data ?? {}));
      this.insertDeliveries.run(id, now);
    })();
    for (const l of this.listeners) l();
    return id;
  }
}
