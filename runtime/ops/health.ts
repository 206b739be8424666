/**
 * The host's health, as `GET <basePath>/health` answers it (no token: a load balancer or a
 * supervisor asks): the database is reachable and its file still the one opened and readable,
 * the isolate (isolation mode) is alive and answers, the outbox's backlog, the jobs running.
 * `down` (503) when the database or the isolate is not there; `degraded` when deliveries are
 * failing (the API still works).
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import type { Database, SqliteDb } from '../db/database';

export type IsolateState = 'alive' | 'dead' | 'unresponsive' | null;

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down';
  version: string;
  uptimeS: number;
  db: 'ok' | 'unavailable';
  isolate: IsolateState;
  outbox: { pending: number; failing: number };
  jobs: { running: number };
}

export interface HealthSources {
  db: SqliteDb;
  dbFile: string;
  version: string;
  startedAt: number;
  jobCounts?: () => Record<string, number>;
}

/** The file as opened: a file replaced or removed under the host is a database it no longer writes. */
const sameFile = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino;

export class HostHealth {
  private readonly opened: Stats | undefined;
  private readonly outbox: Database.Statement;
  private readonly schema: Database.Statement;
  /** isolation mode: the isolate's state, asked at each report (serve.ts sets it) */
  isolate: () => IsolateState | Promise<IsolateState> = () => null;

  constructor(private readonly s: HealthSources) {
    this.opened = s.dbFile === ':memory:' ? undefined : statSync(s.dbFile);
    this.outbox = s.db.prepare(
      "SELECT count(*) AS pending, coalesce(sum(attempts > 0), 0) AS failing FROM deliveries WHERE state = 'pending'",
    );
    this.schema = s.db.prepare('SELECT count(*) FROM sqlite_master').pluck();
  }

  /**
   * Whether the database answers and its file is the one opened, readable and writable by its
   * owner. The owner's mode bits are read, not access(2): as root access(2) passes whatever the
   * mode, and a file that lost them is one a non-root reader (a backup) cannot read either.
   */
  dbOk(): boolean {
    try {
      if (this.opened) {
        const now = statSync(this.s.dbFile);
        if (!sameFile(now, this.opened)) return false;
        accessSync(this.s.dbFile, constants.R_OK | constants.W_OK);
        if (process.getuid?.() === now.uid && (now.mode & 0o600) !== 0o600) return false;
      }
      this.schema.get();
      return true;
    } catch {
      return false;
    }
  }

  async report(): Promise<HealthReport> {
    const db = this.dbOk();
    let outbox = { pending: 0, failing: 0 };
    if (db) {
      try {
        outbox = this.outbox.get() as typeof outbox;
      } catch {
        // counted as zero: the db check above says whether the database is there
      }
    }
    const isolate = await this.isolate();
    const running = this.s.jobCounts?.().running ?? 0;
    const down = !db || (isolate !== null && isolate !== 'alive');
    return {
      status: down ? 'down' : outbox.failing > 0 ? 'degraded' : 'ok',
      version: this.s.version,
      uptimeS: Math.floor((Date.now() - this.s.startedAt) / 1000),
      db: db ? 'ok' : 'unavailable',
      isolate,
      outbox,
      jobs: { running },
    };
  }
}
