/**
 * The delivery worker's own machinery on a real SQLite database, with a sender the test settles
 * by hand: when a pass runs (start, kicks, events, the retry timer), stop, errors of the database
 * and of senders, the order and number of sends, and pruning through the worker's own clock
 * (#35). "Nothing else happened" is checked after the worker ran a counted number of passes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { EventsProducer } from '../../runtime/events';
import { notificationSettings } from '../../handlers/notification/contract';
import { DeliveryWorker } from '../../runtime/areas/notification/worker';
import { SendError } from '../../runtime/areas/notification/send-error';
import { waitFor } from '../helpers/notification-peers';
import { emitEvents, insertAgent } from '../helpers/notification-outbox';

interface Send {
  agent: number;
  id: string;
  ok(): void;
  fail(e: unknown): void;
}

interface Rig {
  db: SqliteDb;
  events: EventsProducer;
  worker: DeliveryWorker;
  sends: Send[];
  logs: string[];
  clock: { now: number };
  /** Called inside each send, before it waits for the test (an event recorded mid-pass). */
  during: { send?: () => void };
  agent(enabled?: boolean): number;
  emit(n: number): string[];
  rows(): { event_id: string; agent_id: number; state: string; attempts: number; last_error: string | null }[];
  /** Waits (bounded) until the worker has run `n` more passes than it had when called. */
  passes(n: number, f?: () => void): Promise<void>;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) {
    for (const s of r.sends) s.ok();
    await r.worker.stop();
    r.db.close();
  }
});

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

const HOUR = 3_600_000;

function rig(
  o: {
    settings?: Record<string, unknown>;
    /** the wall clock instead of a fake one (the retry timer's tests) */
    realClock?: boolean;
  } = {},
): Rig {
  const db = openDatabase(':memory:');
  const events = new EventsProducer(db);
  // ahead of the wall clock the producer stamps rows with, so every new row is due at once
  const clock = { now: Date.now() + HOUR };
  const sends: Send[] = [];
  const logs: string[] = [];
  const during: Rig['during'] = {};
  const worker = new DeliveryWorker({
    db,
    events,
    settings: notificationSettings.parse({
      backoffBaseMs: 1000,
      backoffMaxMs: 1000,
      maxAttempts: 10,
      concurrency: 4,
      pollIntervalMs: HOUR,
      ...o.settings,
    }),
    hostId: 'h',
    productName: 'Ballast',
    log: (l) => logs.push(l),
    now: o.realClock ? undefined : () => clock.now,
    send: (agent, n) =>
      new Promise<void>((resolve, reject) => {
        sends.push({ agent: agent.id, id: n.id, ok: () => resolve(), fail: (e) => reject(e) });
        during.send?.();
      }),
  });
  let agents = 0;
  const r: Rig = {
    db,
    events,
    worker,
    sends,
    logs,
    clock,
    during,
    agent(enabled = true) {
      return insertAgent(db, ++agents, enabled);
    },
    emit(n) {
      return emitEvents(events, n);
    },
    rows() {
      return db
        .prepare(
          'SELECT d.event_id, d.agent_id, d.state, d.attempts, d.last_error FROM deliveries d JOIN events e ON e.id = d.event_id ORDER BY d.agent_id, e.seq',
        )
        .all() as ReturnType<Rig['rows']>;
    },
    async passes(n, f) {
      const target = worker.passes + n;
      f?.();
      await waitFor(`${n} more pass(es) of the worker`, () => worker.passes >= target, 5000);
    },
  };
  rigs.push(r);
  return r;
}

const sent = (r: Rig) => r.sends.map((s) => `${s.agent}:${s.id}`);

describe('when the worker looks at the outbox', () => {
  it('never before start; start runs one pass, a second start none; kicks in one turn make one pass', async () => {
    const r = rig();
    const a = r.agent();
    const [e1] = r.emit(1); // the event's kick, before start
    r.worker.kick();
    await turns(10);
    expect([r.worker.passes, sent(r)]).toEqual([0, []]);

    await r.passes(1, () => r.worker.start());
    expect(sent(r)).toEqual([`${a}:${e1}`]);
    r.worker.start();
    await turns(10);
    expect(r.worker.passes).toBe(1);

    r.worker.kick();
    r.worker.kick();
    r.worker.kick();
    await turns(10);
    expect(r.worker.passes).toBe(2);
    expect(sent(r)).toEqual([`${a}:${e1}`]);
  });

  it('an event recorded while the worker idles starts a pass, and its send, at once', async () => {
    const r = rig();
    const a = r.agent();
    await r.passes(1, () => r.worker.start());
    expect(sent(r)).toEqual([]);
    let e1 = '';
    await r.passes(1, () => ([e1] = r.emit(1)));
    expect(sent(r)).toEqual([`${a}:${e1}`]);
  });

  it('events recorded while a pass runs make exactly one more pass', async () => {
    const r = rig();
    const a = r.agent();
    const [e1] = r.emit(1);
    r.during.send = () => {
      r.during.send = undefined;
      r.emit(3); // three kicks from inside the pass
    };
    r.worker.start();
    await turns(10);
    expect(r.worker.passes).toBe(2);
    // the second pass found the agent busy: its newer events wait for e1
    expect(sent(r)).toEqual([`${a}:${e1}`]);
    expect(r.rows().map((x) => x.state)).toEqual(['pending', 'pending', 'pending', 'pending']);
  });

  it('the oldest event goes first across agents, whatever their ids; concurrency counts the sends in flight', async () => {
    const r = rig({ settings: { concurrency: 2 } });
    const [a, b, c, d] = [r.agent(false), r.agent(), r.agent(), r.agent()];
    const [e1] = r.emit(1); // b, c, d only
    r.db.prepare('UPDATE notification_agents SET enabled = 1 WHERE id = ?').run(a);
    const [e2] = r.emit(1); // all four
    await r.passes(1, () => r.worker.start());
    // heads: a→e2, b→e1, c→e1, d→e1; two slots, oldest event first, then the lower id
    expect(sent(r)).toEqual([`${b}:${e1}`, `${c}:${e1}`]);
    await r.passes(1, () => r.sends[0].ok());
    // one slot free again (c still sends): d's e1, not a's newer e2, and only that one
    expect(sent(r).slice(2)).toEqual([`${d}:${e1}`]);
    expect(r.worker.busy).toBe(2);
    // heads a→e2 and b→e2 (d still sends): one event, so the lower id
    await r.passes(1, () => r.sends[1].ok());
    expect(sent(r).slice(3)).toEqual([`${a}:${e2}`]);
  });
});

describe('stop', () => {
  it('starts no new send; resolves only once the sends in flight are settled and recorded', async () => {
    const r = rig();
    const [a, b] = [r.agent(), r.agent()];
    const [e1] = r.emit(1);
    await r.passes(1, () => r.worker.start());
    expect(sent(r)).toEqual([`${a}:${e1}`, `${b}:${e1}`]);
    let stopped = false;
    const stopping = r.worker.stop().then(() => (stopped = true));
    const passes = r.worker.passes;
    const [e2] = r.emit(1);
    r.worker.kick();
    await turns(10);
    expect(stopped).toBe(false);
    r.sends[0].ok();
    await turns(10);
    expect(stopped).toBe(false); // b still sends
    r.sends[1].fail(new SendError('HTTP 503'));
    await stopping;
    expect(r.rows()).toEqual([
      { event_id: e1, agent_id: a, state: 'delivered', attempts: 1, last_error: null },
      { event_id: e2, agent_id: a, state: 'pending', attempts: 0, last_error: null },
      { event_id: e1, agent_id: b, state: 'pending', attempts: 1, last_error: 'HTTP 503' },
      { event_id: e2, agent_id: b, state: 'pending', attempts: 0, last_error: null },
    ]);
    await turns(10);
    expect([r.worker.passes, r.sends.length]).toEqual([passes, 2]);
  });

  it('right after a kick: the pass already scheduled does not run; start after stop does nothing', async () => {
    const r = rig();
    r.agent();
    r.emit(1);
    r.worker.start();
    await r.worker.stop();
    r.worker.start();
    r.worker.kick();
    await turns(10);
    expect([r.worker.passes, r.sends.length]).toEqual([0, 0]);
  });
});

describe('errors', () => {
  it('a database error in a pass is logged with its stack, and the timer tries again', async () => {
    const r = rig({ settings: { pollIntervalMs: 20 } });
    const a = r.agent();
    const [e1] = r.emit(1);
    r.db.exec('ALTER TABLE notification_agents RENAME TO agents_away');
    await r.passes(1, () => r.worker.start());
    expect(r.logs).toHaveLength(1);
    expect(r.logs[0]).toMatch(/^notification delivery: SqliteError: no such table: notification_agents\n\s+at /);
    expect(r.sends).toEqual([]);
    r.db.exec('ALTER TABLE agents_away RENAME TO notification_agents');
    // no kick: the poll timer runs the next pass
    await waitFor('the send after the table is back', () => r.sends.length === 1, 5000);
    expect(sent(r)).toEqual([`${a}:${e1}`]);
  });

  it('a database error while recording an outcome is logged; the delivery stays pending and is sent again', async () => {
    const r = rig();
    const a = r.agent();
    const [e1] = r.emit(1);
    await r.passes(1, () => r.worker.start());
    r.db.exec("CREATE TRIGGER jammed BEFORE UPDATE ON deliveries BEGIN SELECT RAISE(ABORT, 'disk on fire'); END");
    await r.passes(1, () => r.sends[0].ok());
    expect(r.logs).toHaveLength(1);
    expect(r.logs[0]).toMatch(/^notification delivery: SqliteError: disk on fire\n\s+at /);
    expect(r.rows()).toEqual([{ event_id: e1, agent_id: a, state: 'pending', attempts: 0, last_error: null }]);
    r.db.exec('DROP TRIGGER jammed');
    await r.passes(1, () => r.worker.kick());
    expect(sent(r)).toEqual([`${a}:${e1}`, `${a}:${e1}`]);
  });

  it('a sender that throws something other than a SendError: "unexpected", and logged when it fails for good', async () => {
    const r = rig({ settings: { maxAttempts: 1 } });
    const [a, b] = [r.agent(), r.agent()];
    const [e1] = r.emit(1);
    await r.passes(1, () => r.worker.start());
    await r.passes(1, () => {
      r.sends[0].fail(new TypeError('boom'));
      r.sends[1].fail(undefined);
    });
    expect(r.rows()).toEqual([
      { event_id: e1, agent_id: a, state: 'failed', attempts: 1, last_error: 'unexpected: boom' },
      { event_id: e1, agent_id: b, state: 'failed', attempts: 1, last_error: 'unexpected: undefined' },
    ]);
    expect(r.logs).toEqual([
      `notification test.thing.happened (event ${e1}) to agent ${a} (webhook) failed for good after 1 attempt(s): unexpected: boom`,
      `notification test.thing.happened (event ${e1}) to agent ${b} (webhook) failed for good after 1 attempt(s): unexpected: undefined`,
    ]);
  });
});

describe('agents', () => {
  it('a disabled agent with pending deliveries (hand-edited DB): cancelled as "agent disabled", never sent', async () => {
    const r = rig();
    const [a, b] = [r.agent(), r.agent()];
    const [e1, e2] = r.emit(2);
    r.db.prepare('UPDATE notification_agents SET enabled = 0 WHERE id = ?').run(b);
    await r.passes(1, () => r.worker.start());
    expect(sent(r)).toEqual([`${a}:${e1}`]);
    expect(r.rows()).toEqual([
      { event_id: e1, agent_id: a, state: 'pending', attempts: 0, last_error: null },
      { event_id: e2, agent_id: a, state: 'pending', attempts: 0, last_error: null },
      { event_id: e1, agent_id: b, state: 'cancelled', attempts: 0, last_error: 'agent disabled' },
      { event_id: e2, agent_id: b, state: 'cancelled', attempts: 0, last_error: 'agent disabled' },
    ]);
  });

  it('the queue cursor of a removed agent is dropped (a host that creates and destroys agents does not grow)', async () => {
    const r = rig();
    const [a, b] = [r.agent(), r.agent()];
    r.emit(1);
    await r.passes(1, () => r.worker.start());
    await r.passes(1, () => r.sends.forEach((s) => s.ok()));
    const cursor = (r.worker as unknown as { cursor: Map<number, number> }).cursor;
    expect([...cursor.keys()]).toEqual([a, b]);
    r.db.prepare('DELETE FROM notification_agents WHERE id = ?').run(a);
    await r.passes(1, () => r.worker.kick());
    expect([...cursor.keys()]).toEqual([b]);
  });
});

describe('retries', () => {
  it('the timer wakes the worker for the earliest retry among the waiting queues, and only then', async () => {
    const r = rig({ realClock: true, settings: { backoffBaseMs: 1, backoffMaxMs: 60_000 } });
    const [a, b, c] = [r.agent(), r.agent(), r.agent()];
    const [e1] = r.emit(1);
    await r.passes(1, () => r.worker.start());
    // all fail in one turn: one pass sees the three queues waiting; the middle one's retry is
    // due first (neither the first nor the last the pass looks at)
    await r.passes(1, () => {
      r.sends[0].fail(new SendError('HTTP 429', { retryAfterMs: 60_000 }));
      r.sends[1].fail(new SendError('HTTP 503', { retryAfterMs: 300 }));
      r.sends[2].fail(new SendError('HTTP 429', { retryAfterMs: 60_000 }));
    });
    const waiting = r.worker.passes;
    const line = (agent: number, next: string, error: string) =>
      `notification test.thing.happened (event ${e1}) to agent ${agent} (webhook): attempt 1/10 failed, next in ${next} s (the agent's newer notifications wait): ${error}`;
    expect(r.logs).toEqual([line(a, '60', 'HTTP 429'), line(b, '0.3', 'HTTP 503'), line(c, '60', 'HTTP 429')]);
    await waitFor("b's retry", () => r.sends.length === 4, 5000);
    expect(sent(r)[3]).toBe(`${b}:${e1}`);
    // one timer (a second one if it fired a hair early), not a pass every turn while waiting
    expect(r.worker.passes - waiting).toBeLessThanOrEqual(3);
  });
});

describe('pruning through the worker', () => {
  it('at the first pass and then once an hour; never an event that still owes a delivery', async () => {
    const r = rig({ settings: { retainEvents: 10 } });
    const a = r.agent();
    const [e1] = r.emit(1);
    await r.passes(1, () => r.worker.start()); // pruned now: nothing to drop
    const started = r.clock.now;
    expect(sent(r)).toEqual([`${a}:${e1}`]); // held in flight: e1 owes a delivery
    r.db.prepare('UPDATE notification_agents SET enabled = 0 WHERE id = ?').run(a);
    const later = r.emit(14); // no deliveries: a is disabled
    const ids = () => (r.db.prepare('SELECT id FROM events ORDER BY seq').all() as { id: string }[]).map((x) => x.id);
    await r.passes(1, () => r.worker.kick());
    expect(ids()).toHaveLength(15);
    r.clock.now = started + HOUR - 1;
    await r.passes(1, () => r.worker.kick());
    expect(ids()).toHaveLength(15);
    r.clock.now = started + HOUR;
    await r.passes(1, () => r.worker.kick());
    // seq 1..5 are beyond the newest 10; e1 stays, its delivery is in flight
    expect(ids()).toEqual([e1, ...later.slice(4)]);
    r.sends[0].ok();
    await waitFor('e1 recorded', () => r.rows()[0]?.state === 'delivered', 5000);
  });
});
