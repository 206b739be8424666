import type { Database, SqliteDb } from './database';

/** One audit_log row (argv as JSON text; never stdin, pty answers or a secret). */
export interface AuditRow {
  at: number;
  requestId: string | null;
  kind: string;
  argv: string;
  exitCode: number | null;
  durationMs: number | null;
  note: string | null;
}

export interface AuditWriter {
  write(row: AuditRow): void;
  /** Writes whatever is waiting (the host's WHATWG entry and close() call it). */
  flush(): void;
  /** A batching writer: the commit of the rows waiting now (undefined when none wait). */
  whenWritten?(): Promise<void> | undefined;
  close(): void;
}

const INSERT =
  'INSERT INTO audit_log (at, request_id, kind, argv, exit_code, duration_ms, note) VALUES (?, ?, ?, ?, ?, ?, ?)';

function insertOf(db: SqliteDb): (r: AuditRow) => void {
  const stmt = db.prepare(INSERT);
  return (r) => stmt.run(r.at, r.requestId, r.kind, r.argv, r.exitCode, r.durationMs, r.note);
}

/** What an area's host op records (the SYSTEM service's own rows go through its AuditWriter). */
export interface OpAuditRow {
  kind: string;
  requestId: string | undefined;
  /** the op's operands (paths, names), stored as JSON */
  argv: unknown[];
  note: string | null;
  exitCode?: number | null;
  durationMs?: number | null;
}

/** The audit row of an area's host op, written at once (autocommit), stamped now. */
export function opAudit(db: SqliteDb): (row: OpAuditRow) => void {
  const insert = insertOf(db);
  return (r) =>
    insert({
      at: Date.now(),
      requestId: r.requestId ?? null,
      kind: r.kind,
      argv: JSON.stringify(r.argv),
      exitCode: r.exitCode ?? null,
      durationMs: r.durationMs ?? null,
      note: r.note,
    });
}

/** One autocommit INSERT per row, at once (tests that build a SystemService by hand). */
export function immediateAudit(db: SqliteDb): AuditWriter {
  const insert = insertOf(db);
  return { write: insert, flush: () => undefined, close: () => undefined };
}

export interface AuditRetention {
  /** rows older than this many days are deleted */
  maxAgeDays: number;
  /** only the newest this many rows are kept */
  maxRows: number;
}

const DAY_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * The host's audit writer: rows wait until the end of the event-loop turn (setImmediate) and
 * are written in one transaction, like the access log's lines; under load that is one commit
 * (one WAL append, one lock round) for every request answered in that turn instead of one each.
 * The host's handle() waits for whenWritten() before answering, so a request's rows are
 * committed before its answer is written.
 *
 * Retention: at start, after every 1% of maxRows new rows, and hourly, rows older than
 * maxAgeDays are deleted, then all but the newest maxRows.
 */
export class BatchedAudit implements AuditWriter {
  private pending: AuditRow[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  /** resolves when the waiting rows are written (or failed and were logged) */
  private written: Promise<void> | undefined;
  private resolveWritten: (() => void) | undefined;
  private sincePrune = 0;
  private readonly pruneEvery: number;
  private readonly writeAll: (rows: AuditRow[]) => void;
  private readonly byAge: Database.Statement;
  private readonly byCount: Database.Statement;
  private readonly timer: NodeJS.Timeout;

  constructor(
    db: SqliteDb,
    private readonly retention: AuditRetention,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    const insert = insertOf(db);
    this.writeAll = db.transaction((rows: AuditRow[]) => {
      for (const r of rows) insert(r);
    });
    this.byAge = db.prepare('DELETE FROM audit_log WHERE at < ?');
    this.byCount = db.prepare(
      'DELETE FROM audit_log WHERE id < (SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET ?)',
    );
    this.pruneEvery = Math.max(100, Math.floor(retention.maxRows / 100));
    this.prune();
    this.timer = setInterval(() => this.prune(), PRUNE_INTERVAL_MS).unref();
  }

  write(row: AuditRow): void {
    this.pending.push(row);
    this.scheduled ??= setImmediate(this.flush);
  }

  /**
   * When rows are waiting: a promise of their commit (the host answers after it, so a row is in
   * the DB before the client sees the answer, whatever phase of the event loop wrote the reply).
   * Every request that ends in the same turn waits for the same commit.
   */
  whenWritten(): Promise<void> | undefined {
    if (this.pending.length === 0) return undefined;
    this.written ??= new Promise<void>((resolve) => (this.resolveWritten = resolve));
    return this.written;
  }

  readonly flush = (): void => {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const resolve = this.resolveWritten;
    this.written = undefined;
    this.resolveWritten = undefined;
    if (this.pending.length === 0) {
      resolve?.();
      return;
    }
    const rows = this.pending;
    this.pending = [];
    try {
      this.writeAll(rows);
      this.sincePrune += rows.length;
      if (this.sincePrune >= this.pruneEvery) this.prune();
    } catch (e) {
      // never a crash of the host from a timer: say what was lost
      this.log(`audit: ${rows.length} row(s) not written: ${String(e)}`);
    }
    resolve?.();
  };

  /** Deletes what retention no longer keeps; returns how many rows went. */
  prune(now = Date.now()): number {
    this.sincePrune = 0;
    const aged = this.byAge.run(now - this.retention.maxAgeDays * DAY_MS).changes;
    const counted = this.byCount.run(this.retention.maxRows - 1).changes;
    return aged + counted;
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
