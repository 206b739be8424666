/** Rows the notification worker's fast tests put in the outbox directly (a real SQLite DB). */
import type { SqliteDb } from '../../runtime/db/database';
import type { EventsProducer } from '../../runtime/events';

/** A webhook agent row (its URL numbered `n`, never reached: the tests' sender stands in). */
export function insertAgent(db: SqliteDb, n: number, enabled: boolean): number {
  const info = db
    .prepare(
      "INSERT INTO notification_agents (type, enabled, json, unix_time, created_at, updated_at) VALUES ('webhook', ?, ?, 0, '', '')",
    )
    .run(enabled ? 1 : 0, JSON.stringify({ url: `http://127.0.0.1:9/${n}` }));
  return Number(info.lastInsertRowid);
}

/** `n` events of one kind, recorded in order; their ids. */
export function emitEvents(events: EventsProducer, n: number): ReturnType<EventsProducer['record']>[] {
  return Array.from({ length: n }, (_, i) => events.record({ kind: 'test.thing.happened', data: { i } }));
}
