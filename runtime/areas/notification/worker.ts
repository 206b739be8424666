import type { Statement } from 'better-sqlite3';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import { notificationOf } from './payload';
import { deliveryAgent, sendThrough } from './send';
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
}

interface DueRow {
  event_id: string;
  agent_id: number;
  attempts: number;
  kind: string;
  at: number;
  data: string;
  agent_type: string | null;
  agent_enabled: number | null;
  agent_json: string | null;
}

/** Rows looked at per pass; enough to find work for every free slot behind a few busy agents. */
const LOOKAHEAD = 256;
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
 * Everything is in the DB, so a restart picks up where the last process stopped. A row in flight
 * is never picked again until its send has settled and been recorded, and each agent has one
 * send in flight at most (so it gets its notifications in event order, and one slow destination
 * holds one slot, not all of them). Only a crash between a successful send and the write that
 * records it can repeat a send: the repeat carries the same event id (webhook-id,
 * X-Ballast-Event-Id), so receivers can drop it.
 */
export class DeliveryWorker {
  private readonly selectDue: Statement;
  private readonly nextDue: Statement;
  private readonly markDelivered: Statement;
  private readonly markRetry: Statement;
  private readonly markFinal: Statement;
  private readonly prune: Statement;
  private readonly now: () => number;
  /** Sends in flight, by agent id (one per agent). */
  private readonly inFlight = new Map<number, Promise<void>>();
  private started = false;
  private stopped = false;
  private kicked = false;
  private timer: NodeJS.Timeout | undefined;
  private lastPrune = 0;

  constructor(private readonly o: DeliveryWorkerOptions) {
    const db = o.db;
    this.now = o.now ?? Date.now;
    this.selectDue = db.prepare(`
      SELECT d.event_id, d.agent_id, d.attempts, e.kind, e.at, e.data,
             a.type AS agent_type, a.enabled AS agent_enabled, a.json AS agent_json
      FROM deliveries d
      JOIN events e ON e.id = d.event_id
      LEFT JOIN notification_agents a ON a.id = d.agent_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ?
      ORDER BY e.seq, d.agent_id
      LIMIT ${LOOKAHEAD}`);
    this.nextDue = db.prepare("SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE state = 'pending' AND next_attempt_at > ?");
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

  private startDue(): void {
    let free = this.o.settings.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const due = this.selectDue.all(this.now()) as DueRow[];
    let ctx: SendContext | undefined;
    for (const row of due) {
      if (free <= 0) break;
      if (this.inFlight.has(row.agent_id)) continue;
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
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const next = (this.nextDue.get(this.now()) as { at: number | null }).at;
    const wait = next === null ? this.o.settings.pollIntervalMs : Math.min(Math.max(0, next - this.now()), this.o.settings.pollIntervalMs);
    this.timer = setTimeout(() => this.kick(), wait);
    // The HTTP server keeps a host alive; a pending retry alone must not (tests, CLI).
    this.timer.unref();
  }

  private async deliver(row: DueRow, ctx: SendContext): Promise<void> {
    const attempts = row.attempts + 1;
    if (row.agent_type === null || row.agent_json === null) {
      this.markFinal.run('cancelled', row.attempts, null, 'agent removed', row.event_id, row.agent_id);
      return;
    }
    if (row.agent_enabled !== 1) {
      this.markFinal.run('cancelled', row.attempts, null, 'agent disabled', row.event_id, row.agent_id);
      return;
    }
    const started = this.now();
    try {
      const agent = deliveryAgent(row.agent_id, row.agent_type, row.agent_json);
      const n = notificationOf({ id: row.event_id, kind: row.kind, at: row.at, data: JSON.parse(row.data) as Record<string, unknown> }, this.o.hostId);
      await sendThrough(agent, n, ctx);
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
        this.o.log(`${what}: attempt ${attempts}/${this.o.settings.maxAttempts} failed, next in ${Math.round(delay / 100) / 10} s: ${err.message}`);
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
