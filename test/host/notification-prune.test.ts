/**
 * The outbox keeps the newest settings.notification.retainEvents events, and never one that still
 * owes a delivery (#35 item 4): the worker's prune, on a real SQLite database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { EventsProducer } from '../../runtime/events';
import { notificationSettings } from '../../handlers/notification/contract';
import { DeliveryWorker } from '../../runtime/areas/notification/worker';

let db: SqliteDb | undefined;
afterEach(() => db?.close());

describe('outbox pruning', () => {
  it('drops the oldest events beyond retainEvents, except those whose delivery is still pending', () => {
    db = openDatabase(':memory:');
    const events = new EventsProducer(db);
    const worker = new DeliveryWorker({
      db,
      events,
      settings: notificationSettings.parse({ retainEvents: 10 }),
      hostId: 'h',
      productName: 'Ballast',
      log: () => undefined,
      now: () => Date.now(),
      send: async () => undefined,
    });
    const ids = Array.from({ length: 15 }, (_, i) => events.record({ kind: 'test.thing.happened', data: { i } }));
    const deliver = db.prepare(
      'INSERT INTO deliveries (event_id, agent_id, state, attempts, next_attempt_at) VALUES (?, 1, ?, 0, 0)',
    );
    // the oldest owes a delivery; the second failed for good; the rest were delivered
    ids.forEach((id, i) => deliver.run(id, i === 0 ? 'pending' : i === 1 ? 'failed' : 'delivered'));
    (worker as unknown as { prune: { run(n: number): void } }).prune.run(10);
    const left = (db.prepare('SELECT id FROM events ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
    // seq 1..5 are beyond the newest 10; of those only the pending one stays
    expect(left).toEqual([ids[0], ...ids.slice(5)]);
  });
});
