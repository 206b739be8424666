import type { Statement } from 'better-sqlite3';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import { notificationOf, type Notification } from './payload';
import { deliveryAgent, sendThrough, type DeliveryAgent } from './send';
import { SendError } from './send-error';
import type { SendContext } from './senders/context';
import { backoffMs, type DeliverySettings } from './settings';
import { trustedCas } from './trust';

export interface DeliveryWorkerOptions {
  db: SqliteDb;
  events: EventsProducer;
  settings: DeliverySettings;
  hostId: string;
  productName: string;
  /** The appliance's trusted-certificates directory (paths.caCertificates). */
  caDir?: string;
  log: (line: string) => void;
  now?: () => number;
  /** Sends one notification (default: sendThrough); tests put a fake here. */
  send?: (agent: DeliveryAgent, n: Notification, ctx: SendContext) => Promise<void>;
}

/** The oldest pending delivery of one agent: the head of its queue. */
interface HeadRow {
  event_id: string;
  agent_id: number;
  seq: number;
  attempts: number;
  next_attempt_at: number;
  kind: string;
  at: number;
  data: string;
  agent_type: string | null;
  agent_enabled: number | null;
  agent_json: string | null;
}

const PRUNE_EVERY_MS = 3600_000;

/**
 * Drains the outbox (`deliveries`): each row is one (event, agent) pair, written by the
 * EventsProducer in the same transaction as its event. State machine of a row:
 *
 *   pending ──send ok──────────────────────────────► delivered   (final; never sent again)
 *   pending ──send failed, attempts < maxAttempts──► pending     (next_attempt_at = now + backoff)
 *   pending ──failed maxAttempts times, or 410─────► failed      (final)
 *   pending ──agent disabled or removed────────────► cancelled   (final)
 *
 * Each agent is a FIFO queue in event order (`events.seq`): only its oldest pending row (the
 * head) is ever sent. While the head waits for a retry, the agent's newer rows wait too (the
 * agent backs off as a whole: its destination is what failed); the queue moves on once the head
 * is delivered, failed or cancelled. One send per agent is in flight at most, and up to
 * `concurrency` agents send at once, so a slow or dead destination holds up only itself.
 *
 * Everything is in the DB, so a restart picks up where the last process stopped. A row in flight
 * is never picked again until its send has settled and been recorded. Only a crash between a
 * successful send and the write that records it can repeat a send, and only the head's: the
 * repeat carries the same event id (webhook-id, X-Ballast-Event-Id) and sequence, so receivers
 * can drop it.
 *
 * A send already in flight when its agent is disabled or removed is not called back: if it
 * succeeds it is recorded `delivered` (the destination has it), over the `cancelled` the route
 * wrote; if it fails it stays `cancelled` and is never retried.
 */
export class DeliveryWorker {
  private readonly selectHeads: Statement;
  private readonly markDelivered: Statement;
  private readonly markRetry: Statement;
  private readonly markFinal: Statement;
  private readonly cancelAgent: Statement;
  private readonly prune: Statement;
  private readonly now: () => number;
  private readonly send: (agent: DeliveryAgent, n: Notification, ctx: SendContext) => Promise<void>;
  /** Sends in flight, by agent id (one per agent). */
  private readonly inFlight = new Map<number, Promise<void>>();
  private started = false;
  private stopped = false;
  private kicked = false;
  private timer: NodeJS.Timeout | undefined;
  private lastPrune = 0;
  /** The earliest retry time among the queues that are waiting (null: none). */
  private nextRetryAt: number | null = null;

  constructor(private readonly o: DeliveryWorkerOptions) {
    const db = o.db;
    this.now = o.now ?? Date.now;
    this.send = o.send ?? sendThrough;
    // One row per agent with pending deliveries: its oldest (SQLite takes the bare columns from
    // the row that has the MIN). Then the event and the agent of each head.
    this.selectHeads = db.prepare(`
      WITH heads AS (
        SELECT d.agent_id, d.event_id, MIN(e.seq) AS seq, d.attempts, d.next_attempt_at
        FROM deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.state = 'pending'
        GROUP BY d.agent_id)
      SELECT h.event_id, h.agent_id, h.seq, h.attempts, h.next_attempt_at, e.kind, e.at, e.data,
             a.type AS agent_type, a.enabled AS agent_enabled, a.json AS agent_json
      FROM heads h
      JOIN events e ON e.id = h.event_id
      LEFT JOIN notification_agents a ON a.id = h.agent_id
      ORDER BY h.seq, h.agent_id`);
    // No state condition: a send that succeeded is recorded even if the agent was disabled meanwhile.
    this.markDelivered = db.prepare(
      "UPDATE deliveries SET state = 'delivered', attempts = attempts + 1, last_attempt_at = ?, delivered_at = ?, last_error = NULL WHERE event_id = ? AND agent_id = ?",
    );
    this.markRetry = db.prepare(
      "UPDATE deliveries SET attempts = ?, last_attempt_at = ?, next_attempt_at = ?, last_error = ? WHERE event_id = ? AND agent_id = ? AND state = 'pending'",
    );
    this.markFinal = db.prepare(
      "UPDATE deliveries SET state = ?, attempts = ?, last_attempt_at = ?, last_error = ? WHERE event_id = ? AND agent_id = ? AND state = 'pending'",
    );
    this.cancelAgent = db.prepare("UPDATE deliveries SET state = 'cancelled', last_error = ? WHERE agent_id = ? AND state = 'pending'");
    this.prune = db.prepare(`
      DELETE FROM events
      WHERE seq <= (SELECT MAX(seq) FROM events) - ?
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.state = 'pending')`);
    o.events.onEvent(() => this.kick());
  }

  /** Starts sending what is due now, then whenever an event is recorded or a retry falls due. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.kick();
  }

  /**
   * Look at the outbox on the next turn of the event loop. Cheap to call often (every event
   * calls it); calls in one turn coalesce, and it never runs inside the caller's request.
   */
  kick(): void {
    if (!this.started || this.stopped || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      this.pump();
    });
  }

  /** No new sends start; resolves once the sends in flight have settled and been recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Sends in flight now (for tests and diagnostics). */
  get busy(): number {
    return this.inFlight.size;
  }

  private pump(): void {
    if (this.stopped) return;
    try {
      this.startDue();
      this.maybePrune();
    } catch (e) {
      // A DB error must not kill the worker: log it, and the timer tries again later.
      this.o.log(`notification delivery: ${(e as Error)?.stack ?? String(e)}`);
    }
    this.schedule();
  }

  /** Sends the heads that are due, oldest event first, on as many free slots as there are. */
  private startDue(): void {
    const now = this.now();
    const heads = this.selectHeads.all() as HeadRow[];
    let free = this.o.settings.concurrency - this.inFlight.size;
    let nextRetryAt: number | null = null;
    let ctx: SendContext | undefined;
    for (const row of heads) {
      if (this.inFlight.has(row.agent_id)) continue;
      if (row.agent_type === null || row.agent_json === null || row.agent_enabled !== 1) {
        // Only a hand-edited DB gets here (the routes cancel in the same transaction): cancel the
        // whole queue at once rather than one row per pass.
        this.cancelAgent.run(row.agent_type === null ? 'agent removed' : 'agent disabled', row.agent_id);
        this.kick();
        continue;
      }
      if (row.next_attempt_at > now) {
        // The head waits for its retry, and the agent's newer deliveries with it.
        if (nextRetryAt === null || row.next_attempt_at < nextRetryAt) nextRetryAt = row.next_attempt_at;
        continue;
      }
      if (free <= 0) continue;
      ctx ??= { settings: this.o.settings, productName: this.o.productName, ca: trustedCas(this.o.caDir) };
      const send = this.deliver(row, ctx)
        .catch((e) => this.o.log(`notification delivery: ${(e as Error)?.stack ?? String(e)}`))
        .finally(() => {
          this.inFlight.delete(row.agent_id);
          this.kick();
        });
      this.inFlight.set(row.agent_id, send);
      free--;
    }
    this.nextRetryAt = nextRetryAt;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const next = this.nextRetryAt;
    const wait = next === null ? this.o.settings.pollIntervalMs : Math.min(Math.max(0, next - this.now()), this.o.settings.pollIntervalMs);
    this.timer = setTimeout(() => this.kick(), wait);
    // The HTTP server keeps a host alive; a pending retry alone must not (tests, CLI).
    this.timer.unref();
  }

  private async deliver(row: HeadRow, ctx: SendContext): Promise<void> {
    const attempts = row.attempts + 1;
    const started = this.now();
    try {
      const agent = deliveryAgent(row.agent_id, row.agent_type ?? '', row.agent_json ?? '');
      const n = notificationOf({ id: row.event_id, seq: row.seq, kind: row.kind, at: row.at, data: JSON.parse(row.data) as Record<string, unknown> }, this.o.hostId);
      await this.send(agent, n, ctx);
      this.markDelivered.run(started, this.now(), row.event_id, row.agent_id);
    } catch (e) {
      const err = e instanceof SendError ? e : new SendError(`unexpected: ${(e as Error)?.message ?? String(e)}`);
      const what = `notification ${row.kind} (event ${row.event_id}) to agent ${row.agent_id} (${row.agent_type})`;
      if (err.permanent || attempts >= this.o.settings.maxAttempts) {
        this.markFinal.run('failed', attempts, started, err.message, row.event_id, row.agent_id);
        this.o.log(`${what} failed for good after ${attempts} attempt(s): ${err.message}`);
      } else {
        const delay = backoffMs(this.o.settings, attempts, err.retryAfterMs);
        this.markRetry.run(attempts, started, this.now() + delay, err.message, row.event_id, row.agent_id);
        this.o.log(`${what}: attempt ${attempts}/${this.o.settings.maxAttempts} failed, next in ${Math.round(delay / 100) / 10} s (the agent's newer notifications wait): ${err.message}`);
      }
    }
  }

  private maybePrune(): void {
    const now = this.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.prune.run(this.o.settings.retainEvents);
  }
}
