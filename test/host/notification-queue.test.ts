import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { EventsProducer } from '../../runtime/events';
import { notificationSettings } from '../../handlers/notification/contract';
import { DeliveryWorker } from '../../runtime/areas/notification/worker';
import { SendError } from '../../runtime/areas/notification/send-error';
import type { DeliveryAgent } from '../../runtime/areas/notification/send';
import type { Notification } from '../../runtime/areas/notification/payload';
import { emitEvents, insertAgent } from '../helpers/notification-outbox';

/**
 * The worker's per-agent FIFO queue, with a fake sender and a fake clock: every send waits until
 * the test settles it, so "what was sent, in which order, and what was not" is exact.
 */

interface PendingSend {
  agent: number;
  sequence: number | undefined;
  id: string;
  settle: (outcome: 'ok' | SendError) => Promise<void>;
}

interface Rig {
  db: SqliteDb;
  events: EventsProducer;
  worker: DeliveryWorker;
  sends: PendingSend[];
  clock: { now: number };
  /** Resolves with the next send the worker starts (one not yet returned by next()). */
  next(): Promise<PendingSend>;
  /** Lets the worker run a few passes, then asserts that it started no further send. */
  quiet(): Promise<void>;
  agent(enabled?: boolean): number;
  emit(n: number): string[];
  row(eventId: string, agentId: number): { state: string; attempts: number; next_attempt_at: number } | undefined;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    for (const s of r.sends) await s.settle('ok').catch(() => undefined);
    await r.worker.stop();
    r.db.close();
  }
});

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function rig(o: { maxAttempts?: number; concurrency?: number } = {}): Rig {
  const db = openDatabase(':memory:');
  const events = new EventsProducer(db);
  // ahead of the wall clock the producer stamps rows with, so every new row is due at once
  const clock = { now: Date.now() + 3_600_000 };
  const sends: PendingSend[] = [];
  let taken = 0;
  const waiters: ((s: PendingSend) => void)[] = [];
  const settings = notificationSettings.parse({
    backoffBaseMs: 1000,
    backoffMaxMs: 1000,
    maxAttempts: o.maxAttempts ?? 10,
    concurrency: o.concurrency ?? 4,
    pollIntervalMs: 3_600_000,
  });
  const send = (agent: DeliveryAgent, n: Notification) =>
    new Promise<void>((resolve, reject) => {
      let settled: (() => void) | undefined;
      const done = new Promise<void>((r) => (settled = r));
      const s: PendingSend = {
        agent: agent.id,
        sequence: n.sequence,
        id: n.id,
        async settle(outcome) {
          if (outcome === 'ok') resolve();
          else reject(outcome);
          settled!();
          await done;
          // the worker records the outcome right after the promise settles
          await turns(3);
        },
      };
      sends.push(s);
      const w = waiters.shift();
      if (w) {
        taken++;
        w(s);
      }
    });
  const worker = new DeliveryWorker({
    db,
    events,
    settings,
    hostId: 'h',
    productName: 'Ballast',
    log: () => undefined,
    now: () => clock.now,
    send,
  });
  let agents = 0;
  const r: Rig = {
    db,
    events,
    worker,
    sends,
    clock,
    next() {
      if (taken < sends.length) return Promise.resolve(sends[taken++]);
      return new Promise((res) => waiters.push(res));
    },
    async quiet() {
      const before = sends.length;
      await turns(20);
      expect(sends.slice(before).map((s) => `${s.agent}:${s.sequence}`)).toEqual([]);
    },
    agent(enabled = true) {
      return insertAgent(db, ++agents, enabled);
    },
    emit(n) {
      return emitEvents(events, n);
    },
    row(eventId, agentId) {
      return db
        .prepare('SELECT state, attempts, next_attempt_at FROM deliveries WHERE event_id = ? AND agent_id = ?')
        .get(eventId, agentId) as { state: string; attempts: number; next_attempt_at: number } | undefined;
    },
  };
  rigs.push(r);
  return r;
}

const seqOf = (r: Rig, id: string) =>
  (r.db.prepare('SELECT seq FROM events WHERE id = ?').get(id) as { seq: number }).seq;

describe('per-agent FIFO', () => {
  it('a failed head holds the agent’s newer deliveries until its retry; other agents go on', async () => {
    const r = rig();
    const a = r.agent();
    const b = r.agent();
    const [e1, e2, e3] = r.emit(3);
    r.worker.start();

    // One send per agent in flight, both start with event 1.
    const first = [await r.next(), await r.next()];
    expect(first.map((s) => [s.agent, s.sequence])).toEqual([
      [a, seqOf(r, e1)],
      [b, seqOf(r, e1)],
    ]);
    await r.quiet();

    await first[0].settle(new SendError('webhook answered HTTP 503'));
    expect(r.row(e1, a)).toMatchObject({ state: 'pending', attempts: 1 });
    // backoff 1000 ms −20 % jitter, capped at backoffMaxMs 1000
    expect(r.row(e1, a)!.next_attempt_at - r.clock.now).toBeGreaterThanOrEqual(800);
    expect(r.row(e1, a)!.next_attempt_at - r.clock.now).toBeLessThanOrEqual(1000);
    await r.quiet(); // a's e2 and e3 are due, but wait behind e1
    expect(r.row(e2, a)).toMatchObject({ state: 'pending', attempts: 0 });

    // b is not held by a: its queue drains in order.
    await first[1].settle('ok');
    const b2 = await r.next();
    expect([b2.agent, b2.id]).toEqual([b, e2]);
    await b2.settle('ok');
    const b3 = await r.next();
    expect([b3.agent, b3.id]).toEqual([b, e3]);
    await b3.settle('ok');
    await r.quiet();

    // a's retry falls due: e1 again (same id and sequence), then e2, e3.
    r.clock.now += 1000;
    r.worker.kick();
    const retry = await r.next();
    expect([retry.agent, retry.id, retry.sequence]).toEqual([a, e1, seqOf(r, e1)]);
    await retry.settle('ok');
    for (const e of [e2, e3]) {
      const s = await r.next();
      expect([s.agent, s.id]).toEqual([a, e]);
      await s.settle('ok');
    }
    expect([e1, e2, e3].map((e) => r.row(e, a)?.state)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(r.row(e1, a)?.attempts).toBe(2);
  });

  it('a head that fails for good (max attempts, or 410 at once) releases the queue', async () => {
    const r = rig({ maxAttempts: 2 });
    const a = r.agent();
    const [e1, e2, e3] = r.emit(3);
    r.worker.start();
    await (await r.next()).settle(new SendError('HTTP 500'));
    await r.quiet();
    r.clock.now += 1000;
    r.worker.kick();
    const second = await r.next();
    expect(second.id).toBe(e1);
    await second.settle(new SendError('HTTP 500'));
    expect(r.row(e1, a)).toMatchObject({ state: 'failed', attempts: 2 });

    const s2 = await r.next();
    expect(s2.id).toBe(e2);
    await s2.settle(new SendError('webhook answered HTTP 410', { permanent: true }));
    expect(r.row(e2, a)).toMatchObject({ state: 'failed', attempts: 1 });
    const s3 = await r.next();
    expect(s3.id).toBe(e3);
    await s3.settle('ok');
    expect(r.row(e3, a)?.state).toBe('delivered');
  });

  it('cancelling the queue (agent disabled) releases it: after re-enabling, new events go at once', async () => {
    const r = rig();
    const a = r.agent();
    const [e1, e2] = r.emit(2);
    r.worker.start();
    await (await r.next()).settle(new SendError('HTTP 503'));
    // what POST /notification/agent/{id}/update {enabled:false} then {enabled:true} does
    r.db.prepare('UPDATE notification_agents SET enabled = 0 WHERE id = ?').run(a);
    r.db
      .prepare(
        "UPDATE deliveries SET state = 'cancelled', last_error = 'agent disabled' WHERE agent_id = ? AND state = 'pending'",
      )
      .run(a);
    r.db.prepare('UPDATE notification_agents SET enabled = 1 WHERE id = ?').run(a);
    const [e3] = r.emit(1);
    const s = await r.next();
    expect(s.id).toBe(e3);
    await s.settle('ok');
    expect([e1, e2, e3].map((e) => r.row(e, a)?.state)).toEqual(['cancelled', 'cancelled', 'delivered']);
  });

  it('a send in flight when its agent is disabled: recorded delivered if it succeeds, stays cancelled (no retry) if not', async () => {
    const r = rig();
    const a = r.agent();
    const b = r.agent();
    const [e1, e2] = r.emit(2);
    r.worker.start();
    const sa = await r.next();
    const sb = await r.next();
    expect([sa.agent, sb.agent]).toEqual([a, b]);
    for (const id of [a, b]) {
      r.db.prepare('UPDATE notification_agents SET enabled = 0 WHERE id = ?').run(id);
      r.db
        .prepare(
          "UPDATE deliveries SET state = 'cancelled', last_error = 'agent disabled' WHERE agent_id = ? AND state = 'pending'",
        )
        .run(id);
    }
    await sa.settle('ok');
    await sb.settle(new SendError('HTTP 503'));
    await r.quiet();
    r.clock.now += 10_000;
    r.worker.kick();
    await r.quiet();
    expect(
      r.db
        .prepare(
          'SELECT event_id, agent_id, state, attempts, last_error FROM deliveries ORDER BY agent_id, event_id = ? DESC',
        )
        .all(e1),
    ).toEqual([
      { event_id: e1, agent_id: a, state: 'delivered', attempts: 1, last_error: null },
      { event_id: e2, agent_id: a, state: 'cancelled', attempts: 0, last_error: 'agent disabled' },
      { event_id: e1, agent_id: b, state: 'cancelled', attempts: 0, last_error: 'agent disabled' },
      { event_id: e2, agent_id: b, state: 'cancelled', attempts: 0, last_error: 'agent disabled' },
    ]);
    expect(r.sends).toHaveLength(2);
  });

  it('concurrency bounds the agents sending at once; the oldest event goes first', async () => {
    const r = rig({ concurrency: 2 });
    const [a, b, c] = [r.agent(), r.agent(), r.agent()];
    const [e1] = r.emit(1);
    r.worker.start();
    const s1 = await r.next();
    const s2 = await r.next();
    expect([s1.agent, s2.agent]).toEqual([a, b]);
    await r.quiet();
    expect(r.worker.busy).toBe(2);
    await s1.settle('ok');
    const s3 = await r.next();
    expect([s3.agent, s3.id]).toEqual([c, e1]);
    await s2.settle('ok');
    await s3.settle('ok');
  });

  it('a hand-edited DB: pending rows of a removed agent are cancelled all at once, never sent', async () => {
    const r = rig();
    const a = r.agent();
    const ids = r.emit(3);
    r.db.prepare('DELETE FROM notification_agents WHERE id = ?').run(a);
    r.worker.start();
    await r.quiet();
    expect(ids.map((e) => r.row(e, a)?.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
  });
});
