/**
 * The host's Prometheus metrics (prom-client), one registry per host: what its HTTP requests
 * and commands did (observed as they happen), and what its database holds (read at each
 * scrape: outbox deliveries per agent, audit rows, the database's size), plus the process's own
 * (event-loop lag, RSS: prom-client's default metrics). Served at `<basePath>/metrics` with
 * `metrics:read`, or on `metrics.listen` without a token.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import * as prom from 'prom-client';
import type { Database, SqliteDb } from '../db/database';

export const METRICS_CONTENT_TYPE = prom.register.contentType;

/** Seconds; commands and requests of a storage box run from a millisecond to minutes. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const DELIVERY_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400, 86_400];

export interface MetricsSources {
  db: SqliteDb;
  /** the database file (its size and its WAL's) */
  dbFile: string;
  /** jobs by state (the jobs registry, when the host has one): absent → no series */
  jobCounts?: () => Record<string, number>;
  /** commands running and waiting for a place (the SYSTEM service's semaphore): absent → no series */
  commandQueue?: () => { running: number; waiting: number };
}

export interface AnsweredRequest {
  method: string;
  /** the route's pattern (`/api/v2/fs/mount`), `unmatched` for a path no route has */
  route: string;
  status: number;
  ms: number;
}

export interface RanCommand {
  /** the binary's name (`ip`, `mkfs.ext4`) */
  tool: string;
  exitCode: number | null;
  ms: number | null;
}

export class HostMetrics {
  readonly registry = new prom.Registry();
  private readonly requests: prom.Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: prom.Histogram<'method' | 'route' | 'status'>;
  private readonly commands: prom.Counter<'tool' | 'exit_code'>;
  private readonly commandSeconds: prom.Histogram<'tool'>;
  private readonly deliverySeconds: prom.Histogram;
  /** deliveries already observed into deliverySeconds: up to this delivered_at */
  private deliveredSeen: number;

  constructor(private readonly s: MetricsSources) {
    const registers = [this.registry];
    prom.collectDefaultMetrics({ register: this.registry, prefix: 'ballast_' });
    this.requests = new prom.Counter({
      name: 'ballast_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = new prom.Histogram({
      name: 'ballast_http_request_duration_seconds',
      help: 'Time from the request to its answer, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.commands = new prom.Counter({
      name: 'ballast_commands_total',
      help: 'System commands run, by tool and exit code (`none`: killed or never started)',
      labelNames: ['tool', 'exit_code'],
      registers,
    });
    this.commandSeconds = new prom.Histogram({
      name: 'ballast_command_duration_seconds',
      help: 'How long system commands ran, by tool',
      labelNames: ['tool'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.deliverySeconds = new prom.Histogram({
      name: 'ballast_outbox_delivery_latency_seconds',
      help: 'From an event to its delivery to an agent (deliveries since the host started)',
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    const db = s.db;
    const deliveries = db.prepare(
      'SELECT agent_id AS agent, state, count(*) AS n FROM deliveries GROUP BY agent_id, state',
    );
    const delivered = db.prepare(
      "SELECT d.delivered_at AS done, e.at AS at FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.state = 'delivered' AND d.delivered_at > ? ORDER BY d.delivered_at LIMIT 10000",
    );
    this.deliveredSeen = Date.now();
    const auditRows = db.prepare('SELECT count(*) AS n FROM audit_log').pluck();
    const pageCount = db.prepare('PRAGMA page_count').pluck();
    const pageSize = db.prepare('PRAGMA page_size').pluck();
    new prom.Gauge({
      name: 'ballast_outbox_deliveries',
      help: 'Outbox deliveries by agent id and state (pending, failed, delivered, cancelled)',
      labelNames: ['agent', 'state'],
      registers,
      collect() {
        this.reset();
        for (const r of deliveries.all() as { agent: number; state: string; n: number }[])
          this.set({ agent: String(r.agent), state: r.state }, r.n);
      },
    });
    const observeDeliveries = () => this.observeDeliveries(delivered);
    new prom.Gauge({
      name: 'ballast_audit_rows',
      help: 'Rows in the audit log',
      registers,
      collect() {
        this.set(auditRows.get() as number);
        observeDeliveries();
      },
    });
    new prom.Gauge({
      name: 'ballast_db_size_bytes',
      help: 'The SQLite database: its pages and its write-ahead log',
      registers,
      collect() {
        let wal = 0;
        try {
          wal = statSync(`${s.dbFile}-wal`).size;
        } catch {
          // no WAL file (checkpointed and truncated, or an in-memory database)
        }
        this.set((pageCount.get() as number) * (pageSize.get() as number) + wal);
      },
    });
    if (s.jobCounts) {
      const counts = s.jobCounts;
      new prom.Gauge({
        name: 'ballast_jobs',
        help: 'Jobs by state',
        labelNames: ['state'],
        registers,
        collect() {
          this.reset();
          for (const [state, n] of Object.entries(counts())) this.set({ state }, n);
        },
      });
    }
    if (s.commandQueue) {
      const queue = s.commandQueue;
      new prom.Gauge({
        name: 'ballast_command_queue',
        help: 'System commands running and waiting for a place',
        labelNames: ['state'],
        registers,
        collect() {
          const q = queue();
          this.set({ state: 'running' }, q.running);
          this.set({ state: 'waiting' }, q.waiting);
        },
      });
    }
  }

  /** Deliveries made since the last scrape go into the latency histogram once each. */
  private observeDeliveries(stmt: Database.Statement): void {
    for (const r of stmt.all(this.deliveredSeen) as { done: number; at: number }[]) {
      this.deliverySeconds.observe(Math.max(0, r.done - r.at) / 1000);
      this.deliveredSeen = r.done;
    }
  }

  request(r: AnsweredRequest): void {
    const labels = { method: r.method, route: r.route, status: String(r.status) };
    this.requests.inc(labels);
    this.requestSeconds.observe(labels, r.ms / 1000);
  }

  command(c: RanCommand): void {
    this.commands.inc({ tool: c.tool, exit_code: c.exitCode === null ? 'none' : String(c.exitCode) });
    if (c.ms !== null) this.commandSeconds.observe({ tool: c.tool }, c.ms / 1000);
  }

  /** The exposition text (Prometheus 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** A command's tool as metrics and logs name it: the binary's base name, never an operand. */
export const toolOf = (argv: readonly unknown[]): string => (typeof argv[0] === 'string' ? basename(argv[0]) : '?');
