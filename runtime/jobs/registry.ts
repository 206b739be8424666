/**
 * The job registry: one SQLite row per long request (runtime/jobs/gate.ts starts them), its
 * events (progress, log lines, state changes) for the SSE stream, and in-memory waiters so a
 * stream wakes at once. Rows outlive the request and the host; a job still `running` when the
 * host starts again is `interrupted` (interruptLeftovers). Finished jobs are pruned by age and count.
 */
import type { Statement } from 'better-sqlite3';
import type { SqliteDb } from '../db/database';
import {
  FINAL_STATES,
  JOB_STATES,
  type Job,
  type JobEvent,
  type JobProgress,
  type JobState,
  type JobUndo,
} from '../../handlers/core/job';
import { maskSecrets } from './mask';

export interface JobStart {
  requestId: string;
  method: string;
  /** the route as declared (`/api/v2/fs/make_filesystem`) */
  route: string;
  path: string;
  area: string;
  tokenId: string | null;
  budgetMs: number;
}

export interface JobEnd {
  state: JobState;
  status: number | null;
  /** the route's answer text (JSON), kept whole up to the registry's resultBytes */
  resultText: string | null;
  error: { code: string; message: string; [k: string]: unknown } | null;
  undo: JobUndo | null;
}

export interface JobLimits {
  maxAgeMs: number;
  maxRows: number;
  /** events kept per job (the newest; the final state event is always kept) */
  eventsPerJob: number;
  /** answers up to this size are shown inline in the job */
  resultInlineBytes: number;
}

interface JobRow {
  id: string;
  seq: number;
  request_id: string;
  method: string;
  route: string;
  path: string;
  area: string;
  token_id: string | null;
  state: JobState;
  progress: string | null;
  status: number | null;
  result: string | null;
  error: string | null;
  undo: string | null;
  budget_ms: number;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}

const COLUMNS =
  'id, seq, request_id, method, route, path, area, token_id, state, progress, status, result, error, undo, budget_ms, created_at, started_at, ended_at';
const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** Log lines shown in a job (the events keep more). */
const LOG_TAIL = 50;

export class JobRegistry {
  /** per running job: the next event number, and who waits for its next event */
  private readonly live = new Map<string, { next: number; waiters: Set<() => void>; progressAt: number }>();
  private readonly byRequest = new Map<string, string>();
  private nextSeq: number;
  /** statements, prepared once (a job writes a few rows per command) */
  private readonly stmts = new Map<string, Statement<unknown[]>>();
  private finishedSincePrune = 0;
  private prunedAt = 0;

  constructor(
    private readonly db: SqliteDb,
    readonly limits: JobLimits,
    private readonly basePath: () => string,
  ) {
    const max = db.prepare('SELECT MAX(seq) AS m FROM jobs').get() as { m: number | null };
    this.nextSeq = (max.m ?? 0) + 1;
  }

  /** The running job of a request, if it is one. */
  jobOf(requestId: string | undefined): string | undefined {
    return requestId === undefined ? undefined : this.byRequest.get(requestId);
  }

  create(s: JobStart, now = Date.now()): string {
    const id = crypto.randomUUID();
    this.q(
      `INSERT INTO jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', NULL, NULL, NULL, NULL, NULL, ?, ?, ?, NULL)`,
    ).run(id, this.nextSeq++, s.requestId, s.method, s.route, s.path, s.area, s.tokenId, s.budgetMs, now, now);
    this.live.set(id, { next: 1, waiters: new Set(), progressAt: 0 });
    this.byRequest.set(s.requestId, id);
    this.event(id, 'state', { state: 'running' });
    return id;
  }

  /** A route's report: kept as the job's progress; an event at most every 200 ms (and the last). */
  progress(requestId: string | undefined, p: JobProgress, now = Date.now()): void {
    const id = this.jobOf(requestId);
    const live = id && this.live.get(id);
    if (!id || !live) return;
    const full = { ...p };
    if (full.percent === undefined) {
      if (p.done !== undefined && p.total) full.percent = Math.min(100, Math.round((p.done / p.total) * 1000) / 10);
      // a step reported is a step begun: step 2 of 4 is 25 % done
      else if (p.step !== undefined && p.steps)
        full.percent = Math.min(100, Math.round((Math.max(0, p.step - 1) / p.steps) * 1000) / 10);
    }
    this.q('UPDATE jobs SET progress = ? WHERE id = ?').run(JSON.stringify(full), id);
    if (now - live.progressAt < 200 && p.phase === undefined && p.step === undefined) return;
    live.progressAt = now;
    this.event(id, 'progress', full);
  }

  /** A command the job starts (a stream shows what runs now, not only what ran). */
  commandStarted(requestId: string | undefined, argv: readonly string[]): void {
    const id = this.jobOf(requestId);
    if (id) this.log(id, `$ ${argv.join(' ')}`);
  }

  /** A command the job ran: its exit, and what it printed on stderr (masked, bounded). */
  command(requestId: string | undefined, argv: readonly string[], exitCode: number, ms: number, stderr: string): void {
    const id = this.jobOf(requestId);
    if (!id) return;
    this.log(id, `  → ${basename(argv[0] ?? '?')} exit ${exitCode} (${ms} ms)`);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    for (const l of lines.slice(0, 20)) this.log(id, `  ${l.slice(0, 500)}`);
    if (lines.length > 20) this.log(id, `  … ${lines.length - 20} more stderr line(s)`);
  }

  log(id: string, line: string): void {
    if (this.live.has(id)) this.event(id, 'log', { line: maskSecrets(line) });
  }

  finish(id: string, end: JobEnd, now = Date.now()): void {
    const row = this.row(id);
    if (!row || FINAL_STATES.has(row.state)) return;
    this.q('UPDATE jobs SET state = ?, status = ?, result = ?, error = ?, undo = ?, ended_at = ? WHERE id = ?').run(
      end.state,
      end.status,
      end.resultText,
      end.error && JSON.stringify(end.error),
      end.undo && JSON.stringify(end.undo),
      now,
      id,
    );
    this.event(id, 'state', { state: end.state, status: end.status, durationMs: now - row.created_at });
    const live = this.live.get(id);
    this.live.delete(id);
    if (this.byRequest.get(row.request_id) === id) this.byRequest.delete(row.request_id);
    for (const w of live?.waiters ?? []) w();
    this.prune(now);
  }

  /**
   * At start: a job the last host left `running` ends `interrupted`, with the journal's rollback
   * of its request (what recover() undid) when there was one.
   */
  interruptLeftovers(undoOf: (requestId: string) => JobUndo | null, now = Date.now()): string[] {
    const rows = this.q(`SELECT ${COLUMNS} FROM jobs WHERE state IN ('queued', 'running')`).all() as JobRow[];
    for (const r of rows) {
      const undo = undoOf(r.request_id);
      this.live.set(r.id, { next: this.lastEvent(r.id) + 1, waiters: new Set(), progressAt: 0 });
      this.byRequest.set(r.request_id, r.id);
      this.finish(
        r.id,
        {
          state: 'interrupted',
          status: null,
          resultText: null,
          error: {
            code: 'interrupted',
            message: 'the host stopped while the job ran; its change was rolled back at start',
          },
          undo,
        },
        now,
      );
    }
    return rows.map((r) => r.id);
  }

  get(id: string): Job | null {
    const r = this.row(id);
    return r ? this.view(r) : null;
  }

  /** The job's whole answer, for GET /jobs/{id}/result. */
  resultOf(id: string): { status: number; text: string } | null {
    const r = this.row(id);
    return r && r.status !== null && r.result !== null ? { status: r.status, text: r.result } : null;
  }

  list(f: { state?: JobState; area?: string; tokenId?: string; limit: number; beforeSeq?: number }): Job[] {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      args.push(value);
    };
    if (f.state) add('state = ?', f.state);
    if (f.area) add('area = ?', f.area);
    if (f.tokenId) add('token_id = ?', f.tokenId);
    if (f.beforeSeq !== undefined) add('seq < ?', f.beforeSeq);
    const rows = this.q(
      `SELECT ${COLUMNS} FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`,
    ).all(...args, f.limit) as JobRow[];
    return rows.map((r) => this.view(r));
  }

  seqOf(id: string): number | undefined {
    return this.row(id)?.seq;
  }

  events(id: string, after: number): JobEvent[] {
    const rows = this.q('SELECT seq, type, at, data FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq').all(
      id,
      after,
    ) as { seq: number; type: JobEvent['type']; at: number; data: string }[];
    return rows.map((r) => ({
      seq: r.seq,
      type: r.type,
      at: r.at,
      data: JSON.parse(r.data) as Record<string, unknown>,
    }));
  }

  isRunning(id: string): boolean {
    return this.live.has(id);
  }

  /** Resolves at the job's next event, its end, or after `ms`. */
  waitForEvent(id: string, ms: number): Promise<void> {
    const live = this.live.get(id);
    if (!live || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        live.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      live.waiters.add(done);
    });
  }

  /** Every state with its count of kept jobs (`running` from this host's own live jobs). */
  countsByState(): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(JOB_STATES.map((st) => [st, 0]));
    const rows = this.q('SELECT state, COUNT(*) AS n FROM jobs GROUP BY state').all() as {
      state: JobState;
      n: number;
    }[];
    for (const r of rows) out[r.state] = r.n;
    out.running = this.live.size;
    return out;
  }

  private event(id: string, type: JobEvent['type'], data: Record<string, unknown>, now = Date.now()): void {
    const live = this.live.get(id);
    if (!live) return;
    const seq = live.next++;
    this.q('INSERT INTO job_events (job_id, seq, type, at, data) VALUES (?, ?, ?, ?, ?)').run(
      id,
      seq,
      type,
      now,
      JSON.stringify(data),
    );
    // a long job's stream keeps its newest events (a late reader resumes from what is left)
    if (seq > this.limits.eventsPerJob)
      this.q('DELETE FROM job_events WHERE job_id = ? AND seq <= ?').run(id, seq - this.limits.eventsPerJob);
    const waiters = [...live.waiters];
    live.waiters.clear();
    for (const w of waiters) w();
  }

  private q(sql: string): Statement<unknown[]> {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  private lastEvent(id: string): number {
    const r = this.q('SELECT MAX(seq) AS m FROM job_events WHERE job_id = ?').get(id) as { m: number | null };
    return r.m ?? 0;
  }

  private row(id: string): JobRow | undefined {
    return this.q(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`).get(id) as JobRow | undefined;
  }

  /** Every 64 finished jobs, or a minute after the last look: pruning scans the table. */
  private prune(now: number): void {
    if (++this.finishedSincePrune < 64 && now - this.prunedAt < 60_000) return;
    this.finishedSincePrune = 0;
    this.prunedAt = now;
    const old = now - this.limits.maxAgeMs;
    const cut = this.q(`SELECT seq FROM jobs WHERE ended_at IS NOT NULL ORDER BY seq DESC LIMIT 1 OFFSET ?`).get(
      this.limits.maxRows,
    ) as { seq: number } | undefined;
    const gone = this.q('SELECT id FROM jobs WHERE ended_at IS NOT NULL AND (ended_at < ? OR seq <= ?)').all(
      old,
      cut?.seq ?? -1,
    ) as { id: string }[];
    if (gone.length === 0) return;
    const delJob = this.q('DELETE FROM jobs WHERE id = ?');
    const delEvents = this.q('DELETE FROM job_events WHERE job_id = ?');
    this.db.transaction(() => {
      for (const g of gone) {
        delEvents.run(g.id);
        delJob.run(g.id);
      }
    })();
  }

  private view(r: JobRow): Job {
    const base = `${this.basePath()}/jobs/${r.id}`;
    const resultBytes = r.result === null ? null : Buffer.byteLength(r.result);
    const out: Job = {
      id: r.id,
      route: `${r.method} ${r.route}`,
      method: r.method,
      path: r.path,
      area: r.area,
      tokenId: r.token_id,
      requestId: r.request_id,
      state: r.state,
      progress: r.progress === null ? null : (JSON.parse(r.progress) as JobProgress),
      status: r.status,
      resultBytes,
      error: r.error === null ? null : (JSON.parse(r.error) as Job['error']),
      undo: r.undo === null ? null : (JSON.parse(r.undo) as JobUndo),
      budgetS: Math.round(r.budget_ms / 1000),
      createdAt: iso(r.created_at) as string,
      startedAt: iso(r.started_at),
      endedAt: iso(r.ended_at),
      durationMs: r.ended_at === null ? null : r.ended_at - r.created_at,
      log: this.logTail(r.id),
      links: { self: base, events: `${base}/events`, cancel: `${base}/cancel`, result: `${base}/result` },
    };
    if (
      r.result !== null &&
      r.status !== null &&
      r.status < 400 &&
      (resultBytes ?? 0) <= this.limits.resultInlineBytes
    ) {
      try {
        out.result = JSON.parse(r.result) as unknown;
      } catch {
        out.result = r.result;
      }
    }
    return out;
  }

  private logTail(id: string): string[] {
    const rows = this.q("SELECT data FROM job_events WHERE job_id = ? AND type = 'log' ORDER BY seq DESC LIMIT ?").all(
      id,
      LOG_TAIL,
    ) as { data: string }[];
    return rows.reverse().map((r) => (JSON.parse(r.data) as { line: string }).line);
  }
}
