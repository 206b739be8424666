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

/**
 * Rows written with one INSERT of up to AUDIT_BATCH_MAX rows (a statement prepared once per
 * row count): per row, a quarter less CPU than a prepared single-row INSERT each, measured on
 * this machine's SQLite (3.8 → 3.0 µs at 16 rows a batch). Answers the last row's id.
 */
export function insertManyOf(db: SqliteDb): (rows: readonly AuditRow[]) => number {
  const byCount = new Map<number, Database.Statement>();
  const values: (string | number | null)[] = [];
  const statement = (n: number) => {
    let stmt = byCount.get(n);
    if (!stmt) {
      stmt = db.prepare(`${INSERT}${', (?, ?, ?, ?, ?, ?, ?)'.repeat(n - 1)}`);
      byCount.set(n, stmt);
    }
    return stmt;
  };
  return (rows) => {
    let last = 0;
    for (let from = 0; from < rows.length; from += AUDIT_BATCH_MAX) {
      const chunk = rows.length <= AUDIT_BATCH_MAX ? rows : rows.slice(from, from + AUDIT_BATCH_MAX);
      values.length = 0;
      for (const r of chunk) values.push(r.at, r.requestId, r.kind, r.argv, r.exitCode, r.durationMs, r.note);
      last = Number(statement(chunk.length).run(values).lastInsertRowid);
    }
    return last;
  };
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

/**
 * The writer of each database's audit rows: the host's BatchedAudit registers itself, so an
 * area's op rows go through the same batch (one transaction per event-loop turn, retention
 * included) as the SYSTEM service's command rows. A database no host writes for (a test that
 * builds ops by hand) gets autocommit INSERTs.
 */
const writers = new WeakMap<SqliteDb, AuditWriter>();

const opRow = (r: OpAuditRow): AuditRow => ({
  at: Date.now(),
  requestId: r.requestId ?? null,
  kind: r.kind,
  argv: JSON.stringify(r.argv),
  exitCode: r.exitCode ?? null,
  durationMs: r.durationMs ?? null,
  note: r.note,
});

/** The audit row of an area's host op, stamped now, written by the database's audit writer. */
export function opAudit(db: SqliteDb): (row: OpAuditRow) => void {
  let fallback: AuditWriter | undefined;
  return (r) => (writers.get(db) ?? (fallback ??= immediateAudit(db))).write(opRow(r));
}

/**
 * The audit row of an op, committed before this returns (the rows waiting in the batch first,
 * so ids keep their order); throws when it could not be. For a record whose only other trace is
 * about to go (a repair's intent file): a batched row would be lost with a host killed in the
 * same turn.
 */
export function committedOpAudit(db: SqliteDb): (row: OpAuditRow) => void {
  const insertMany = insertManyOf(db);
  return (r) => {
    writers.get(db)?.flush();
    insertMany([opRow(r)]);
  };
}

/** One autocommit INSERT per row, at once (tests that build a SystemService by hand). */
export function immediateAudit(db: SqliteDb): AuditWriter {
  const insertMany = insertManyOf(db);
  return { write: (r) => void insertMany([r]), flush: () => undefined, close: () => undefined };
}

export interface AuditRetention {
  /** rows older than this many days are deleted */
  maxAgeDays: number;
  /** only the newest this many rows are kept */
  maxRows: number;
}

const DAY_MS = 86_400_000;
const AGE_PRUNE_INTERVAL_MS = 3_600_000;
/**
 * A batch is committed at the end of the turn or when this many rows wait, whichever comes
 * first. Without the cap, under load every answer of a turn waited for the whole turn's work
 * (50 requests at once: ~7 ms), which doubled p99; 16 rows keep one commit's cost shared.
 */
export const AUDIT_BATCH_MAX = 16;

/**
 * The host's audit writer: rows wait until the end of the event-loop turn (setImmediate), or
 * until AUDIT_BATCH_MAX of them wait, and are written in one transaction, like the access
 * log's lines; under load that is one commit (one WAL append, one lock round) for many
 * requests instead of one each. The host's handle() waits for whenWritten() before answering,
 * so a request's rows are committed before its answer is written.
 *
 * Retention, by count: each batch's transaction deletes the rows whose id is more than
 * maxRows below the newest (rowids grow by one per row, so that keeps the newest maxRows),
 * a range delete as long as the batch: no pause that grows with the table (the old
 * `OFFSET maxRows` walk read all 200 000 index entries, ~7 ms, every 2 000 rows). By age: at
 * start and hourly. At start the count is also enforced exactly, whatever the ids.
 */
export class BatchedAudit implements AuditWriter {
  private pending: AuditRow[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  /** resolves when the waiting rows are written (or failed and were logged) */
  private written: Promise<void> | undefined;
  private resolveWritten: (() => void) | undefined;
  private readonly writeAll: (rows: AuditRow[]) => void;
  private readonly byAge: Database.Statement;
  private readonly byCount: Database.Statement;
  private readonly belowId: Database.Statement;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: SqliteDb,
    private readonly retention: AuditRetention,
    private readonly log: (line: string) => void = () => undefined,
    /** told how many rows each commit wrote (the WAL checkpointer starts on it) */
    private readonly committed: (rows: number) => void = () => undefined,
  ) {
    const insertMany = insertManyOf(db);
    this.belowId = db.prepare('DELETE FROM audit_log WHERE id <= ?');
    this.writeAll = db.transaction((rows: AuditRow[]) => {
      const last = insertMany(rows);
      // a no-op on the index's left edge until the table is full
      if (last > retention.maxRows) this.belowId.run(last - retention.maxRows);
    });
    this.byAge = db.prepare('DELETE FROM audit_log WHERE at < ?');
    this.byCount = db.prepare(
      'DELETE FROM audit_log WHERE id < (SELECT id FROM audit_log ORDER BY id DESC LIMIT 1 OFFSET ?)',
    );
    this.prune();
    this.timer = setInterval(() => this.pruneByAge(), AGE_PRUNE_INTERVAL_MS).unref();
    writers.set(db, this);
  }

  write(row: AuditRow): void {
    this.pending.push(row);
    if (this.pending.length >= AUDIT_BATCH_MAX) this.flush();
    else this.scheduled ??= setImmediate(this.flush);
  }

  /**
   * When rows are waiting: a promise of their commit (the host answers after it, so a row is in
   * the DB before the client sees the answer, whatever phase of the event loop wrote the reply).
   * Every request whose rows wait in the same batch waits for the same commit.
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
      this.committed(rows.length);
    } catch (e) {
      // never a crash of the host from a timer: say what was lost
      this.log(`audit: ${rows.length} row(s) not written: ${String(e)}`);
    }
    resolve?.();
  };

  /** Rows older than maxAgeDays; returns how many went. */
  pruneByAge(now = Date.now()): number {
    return this.byAge.run(now - this.retention.maxAgeDays * DAY_MS).changes;
  }

  /** Deletes what retention no longer keeps, by age then exactly by count; returns how many rows went. */
  prune(now = Date.now()): number {
    return this.pruneByAge(now) + this.byCount.run(this.retention.maxRows - 1).changes;
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    if (writers.get(this.db) === this) writers.delete(this.db);
  }
}
