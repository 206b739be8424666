import Database from 'better-sqlite3';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { D1Database, D1PreparedStatement, D1Result } from '../../handlers/core/bindings';
import { migrations } from './migrations';

export type SqliteDb = Database.Database;
export type { Database };

/**
 * The database holds agent secrets and token hashes: its directory is 0700 and its files (the
 * database, its WAL and shared-memory files) 0600, set when created and checked at every start.
 */
export function openDatabase(file: string): SqliteDb {
  if (file !== ':memory:') {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  }
  // files SQLite creates get 0600 whatever the service's umask
  const umask = process.umask(0o077);
  let db: SqliteDb;
  try {
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
  } finally {
    process.umask(umask);
  }
  if (file !== ':memory:') {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        if ((statSync(f).mode & 0o077) !== 0) chmodSync(f, 0o600);
      } catch {
        // -wal / -shm appear with the first write
      }
    }
  }
  return db;
}

export function migrate(db: SqliteDb): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  const done = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        Date.now(),
      );
    })();
  }
}

/** SQLite has no booleans; D1 binds them as 1/0, and so do we. */
function bindable(values: unknown[]): unknown[] {
  return values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v === undefined ? null : v));
}

/** Statements are prepared once per SQL text: better-sqlite3 statements are reusable. */
class Statement implements D1PreparedStatement {
  constructor(
    private readonly d1: SqliteD1,
    readonly sql: string,
    readonly params: unknown[] = [],
  ) {}
  bind(...values: unknown[]): D1PreparedStatement {
    return new Statement(this.d1, this.sql, bindable(values));
  }
  async first<T>(column?: string): Promise<T | null> {
    return this.d1.firstSync<T>(this.sql, this.params, column);
  }
  async all<T>(): Promise<D1Result<T>> {
    return this.d1.allSync<T>(this.sql, this.params);
  }
  async run(): Promise<D1Result<never>> {
    return this.d1.runSync(this.sql, this.params);
  }
  async raw<T>(): Promise<T[]> {
    return this.d1.rawSync<T>(this.sql, this.params);
  }
}

export class SqliteD1 implements D1Database {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(readonly db: SqliteDb) {}

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  prepare(sql: string): D1PreparedStatement {
    return new Statement(this, sql);
  }

  firstSync<T>(sql: string, params: unknown[], column?: string): T | null {
    const s = this.stmt(sql);
    const row = (s.reader ? s.get(...params) : (s.run(...params), undefined)) as Record<string, unknown> | undefined;
    if (row === undefined) return null;
    return (column === undefined ? row : row[column]) as T;
  }

  allSync<T>(sql: string, params: unknown[]): D1Result<T> {
    const t0 = performance.now();
    const s = this.stmt(sql);
    if (!s.reader) {
      const r = s.run(...params);
      return {
        results: [],
        success: true,
        meta: { changes: r.changes, last_row_id: Number(r.lastInsertRowid), duration: performance.now() - t0 },
      };
    }
    const results = s.all(...params) as T[];
    return { results, success: true, meta: { changes: 0, last_row_id: 0, duration: performance.now() - t0 } };
  }

  runSync(sql: string, params: unknown[]): D1Result<never> {
    const t0 = performance.now();
    const s = this.stmt(sql);
    if (s.reader) {
      s.all(...params);
      return { results: [], success: true, meta: { changes: 0, last_row_id: 0, duration: performance.now() - t0 } };
    }
    const r = s.run(...params);
    return {
      results: [],
      success: true,
      meta: { changes: r.changes, last_row_id: Number(r.lastInsertRowid), duration: performance.now() - t0 },
    };
  }

  rawSync<T>(sql: string, params: unknown[]): T[] {
    // raw() switches a statement's mode for good, so raw statements get their own cache slot.
    const key = `raw:${sql}`;
    let s = this.cache.get(key);
    if (!s) {
      s = this.db.prepare(sql).raw(true);
      this.cache.set(key, s);
    }
    return s.all(...params) as T[];
  }

  /** D1 semantics: the statements run in one transaction; any failure rolls all of them back. */
  async batch(statements: D1PreparedStatement[]): Promise<D1Result[]> {
    return this.batchSync(statements.map((s) => ({ sql: (s as Statement).sql, params: (s as Statement).params })));
  }

  batchSync(list: { sql: string; params: unknown[] }[]): D1Result[] {
    return this.db.transaction(() =>
      list.map((s) => this.allSync<Record<string, unknown>>(s.sql, bindable(s.params))),
    )();
  }

  async exec(sql: string): Promise<{ count: number; duration: number }> {
    const t0 = performance.now();
    this.db.exec(sql);
    return { count: sql.split(';').filter((s) => s.trim()).length, duration: performance.now() - t0 };
  }
}
