import type { Statement } from 'better-sqlite3';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import { notificationOf, type Notification } from './payload';
import { deliveryAgent, sendThrough, type DeliveryAgent } from './send';
import { SendError } from './send-error';
import type { SendContext } from './senders/context';
import type { NotificationSettings } from '../../../handlers/notification/contract';
import { backoffMs } from './backoff';
import { trustedCas } from './trust';

export interface DeliveryWorkerOptions {
  db: SqliteDb;
  events: EventsProducer;
  settings: NotificationSettings;
  hostId: string;
  productName: string;
  /** The appliance's trusted-certificates directory (paths.caCertificates). */
  caDir?: string;
  /** Opens the agents' sealed secrets (runtime/system/secret-box.ts). */
  openSecret?: (sealed: string) => string;
  log: (line: string) => void;
  now?: () => number;
  /** Sends one notification (default: sendThrough); tests put a fake here. */
  send?: (agent: DeliveryAgent, n: Notification, ctx: SendContext) => Promise<void>;
}

interface AgentRow {
  id: number;
  type: string;
  enabled: number;
  json: string;
}

/** The oldest pending delivery of one agent: the head of its queue. */
interface HeadRow {
  event_id: string;
  seq: number;
  attempts: number;
  next_attempt_at: number;
  kind: string;
  at: number;
  data: string;
}

type Head = HeadRow & { agent: AgentRow };

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
  private readonly selectAgents: Statement;
  private readonly selectMaxSeq: Statement;
  private readonly selectHead: Statement;
  private readonly cancelOrphans: Statement;
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
  private passCount = 0;
  /** The earliest retry time among the queues that are waiting (null: none). */
  private nextRetryAt: number | null = null;
  /**
   * Per agent, a seq at or below its head's: no pending row of the agent has a lower one. Heads
   * only move forward (rows leave `pending` and are never put back; new rows are for new events),
   * so each look at a queue starts here instead of at the oldest retained event.
   */
  private readonly cursor = new Map<number, number>();

  constructor(private readonly o: DeliveryWorkerOptions) {
    const db = o.db;
    this.now = o.now ?? Date.now;
    this.send = o.send ?? sendThrough;
    this.selectAgents = db.prepare('SELECT id, type, enabled, json FROM notification_agents ORDER BY id');
    this.selectMaxSeq = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM events');
    // An agent's head: walk the events in seq order from the agent's cursor and probe its row
    // (CROSS JOIN keeps events as the outer loop, on the seq index): a few index look-ups per
    // pass, whatever the number of pending rows.
    this.selectHead = db.prepare(`
      SELECT e.id AS event_id, e.seq, e.kind, e.at, e.data, d.attempts, d.next_attempt_at
      FROM events e CROSS JOIN deliveries d ON d.event_id = e.id AND d.agent_id = ?
      WHERE e.seq >= ? AND d.state = 'pending'
      ORDER BY e.seq
      LIMIT 1`);
    // Pending rows of an agent that no longer exists: only a hand-edited DB has them (the
    // destroy route cancels them in the same transaction). Swept at start and with the pruning.
    this.cancelOrphans = db.prepare(
      "UPDATE deliveries SET state = 'cancelled', last_error = 'agent removed' WHERE state = 'pending' AND agent_id NOT IN (SELECT id FROM notification_agents)",
    );
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
    this.cancelAgent = db.prepare(
      "UPDATE deliveries SET state = 'cancelled', last_error = ? WHERE agent_id = ? AND state = 'pending'",
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

  /**
   * Passes over the outbox run so far (for tests: "N more passes, and nothing else was sent"
   * is a bound a test can wait on, where a fixed sleep is not).
   */
  get passes(): number {
    return this.passCount;
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
    this.passCount++;
  }

  /** The head of each agent's queue that has one and no send in flight, oldest event first. */
  private heads(): Head[] {
    const agents = this.selectAgents.all() as AgentRow[];
    const maxSeq = (this.selectMaxSeq.get() as { seq: number }).seq;
    const heads: Head[] = [];
    for (const id of this.cursor.keys()) if (!agents.some((a) => a.id === id)) this.cursor.delete(id);
    for (const agent of agents) {
      if (this.inFlight.has(agent.id)) continue;
      const head = this.selectHead.get(agent.id, this.cursor.get(agent.id) ?? 0) as HeadRow | undefined;
      // Nothing pending up to maxSeq (this pass runs on the thread that records events).
      this.cursor.set(agent.id, head ? head.seq : maxSeq + 1);
      if (!head) continue;
      if (agent.enabled !== 1) {
        // Only a hand-edited DB gets here (the update route cancels in the same transaction).
        this.cancelAgent.run('agent disabled', agent.id);
        continue;
      }
      heads.push({ ...head, agent });
    }
    return heads.sort((x, y) => x.seq - y.seq || x.agent.id - y.agent.id);
  }

  /** Sends the heads that are due, oldest event first, on as many free slots as there are. */
  private startDue(): void {
    const now = this.now();
    let free = this.o.settings.concurrency - this.inFlight.size;
    let nextRetryAt: number | null = null;
    let ctx: SendContext | undefined;
    for (const row of this.heads()) {
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
          this.inFlight.delete(row.agent.id);
          this.kick();
        });
      this.inFlight.set(row.agent.id, send);
      free--;
    }
    this.nextRetryAt = nextRetryAt;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const next = this.nextRetryAt;
    const wait =
      next === null
        ? this.o.settings.pollIntervalMs
        : Math.min(Math.max(0, next - this.now()), this.o.settings.pollIntervalMs);
    this.timer = setTimeout(() => this.kick(), wait);
    // The HTTP server keeps a host alive; a pending retry alone must not (tests, CLI).
    this.timer.unref();
  }

  private async deliver(row: Head, ctx: SendContext): Promise<void> {
    const attempts = row.attempts + 1;
    const started = this.now();
    const agentId = row.agent.id;
    try {
      const agent = deliveryAgent(agentId, row.agent.type, row.agent.json, this.o.openSecret);
      const n = notificationOf(
        {
          id: row.event_id,
          seq: row.seq,
          kind: row.kind,
          at: row.at,
          data: JSON.parse(row.data) as Record<string, unknown>,
        },
        this.o.hostId,
      );
      await this.send(agent, n, ctx);
      this.markDelivered.run(started, this.now(), row.event_id, agentId);
    } catch (e) {
      const err = e instanceof SendError ? e : new SendError(`unexpected: ${(e as Error)?.message ?? String(e)}`);
      const what = `notification ${row.kind} (event ${row.event_id}) to agent ${agentId} (${row.agent.type})`;
      if (err.permanent || attempts >= this.o.settings.maxAttempts) {
        this.markFinal.run('failed', attempts, started, err.message, row.event_id, agentId);
        this.o.log(`${what} failed for good after ${attempts} attempt(s): ${err.message}`);
      } else {
        const delay = backoffMs(this.o.settings, attempts, err.retryAfterMs);
        this.markRetry.run(attempts, started, this.now() + delay, err.message, row.event_id, agentId);
        this.o.log(
          `${what}: attempt ${attempts}/${this.o.settings.maxAttempts} failed, next in ${Math.round(delay / 100) / 10} s (the agent's newer notifications wait): ${err.message}`,
        );
      }
    }
  }

  private maybePrune(): void {
    const now = this.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.cancelOrphans.run();
    this.prune.run(this.o.settings.retainEvents);
  }
}
