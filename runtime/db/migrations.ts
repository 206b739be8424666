/**
 * Schema migrations, applied in order at start-up inside one transaction each. Append only:
 * never edit a migration that has shipped; add a new one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'tokens, audit, outbox',
    sql: `
      CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        hash TEXT NOT NULL,
        permissions TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        last_used_at INTEGER
      );
      CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        request_id TEXT,
        kind TEXT NOT NULL,
        argv TEXT,
        exit_code INTEGER,
        duration_ms INTEGER,
        note TEXT
      );
      CREATE INDEX audit_log_at ON audit_log(at);
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        at INTEGER NOT NULL,
        request_id TEXT,
        data TEXT NOT NULL
      );
      CREATE TABLE deliveries (
        event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        agent_id INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_error TEXT,
        delivered_at INTEGER,
        PRIMARY KEY (event_id, agent_id)
      );
      CREATE INDEX deliveries_due ON deliveries(state, next_attempt_at);
      CREATE TABLE notification_agents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        type TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        json TEXT NOT NULL,
        unix_time INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE traffic_rules (
        name TEXT PRIMARY KEY,
        id INTEGER NOT NULL UNIQUE,
        device TEXT NOT NULL,
        ip TEXT NOT NULL,
        rate REAL NOT NULL,
        created_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'deliveries: cancelled state, last attempt time',
    // SQLite cannot change a CHECK constraint in place: rebuild the table, keeping its rows.
    // A delivery is cancelled when its agent is disabled or removed before it went out.
    sql: `
      CREATE TABLE deliveries_v2 (
        event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        agent_id INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        last_attempt_at INTEGER,
        last_error TEXT,
        delivered_at INTEGER,
        PRIMARY KEY (event_id, agent_id)
      );
      INSERT INTO deliveries_v2 (event_id, agent_id, state, attempts, next_attempt_at, last_error, delivered_at)
        SELECT event_id, agent_id, state, attempts, next_attempt_at, last_error, delivered_at FROM deliveries;
      DROP TABLE deliveries;
      ALTER TABLE deliveries_v2 RENAME TO deliveries;
      CREATE INDEX deliveries_due ON deliveries(state, next_attempt_at);
      CREATE INDEX deliveries_agent ON deliveries(agent_id, state);
    `,
  },
  {
    version: 3,
    name: 's3: intent journal of share changes (kill -9 safety)',
    // One row per share change in flight: written before the first change, deleted after the
    // last; the s3 area settles what is left at host start (handlers/s3/journal.ts).
    sql: `
      CREATE TABLE s3_intents (
        share_name TEXT PRIMARY KEY,
        op TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete')),
        request_id TEXT,
        started_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'intent journal: a change in flight, so a host killed mid-change rolls it back at start',
    // runtime/system/journal.ts: the files as they were before (content, mode, owner) and the
    // commands that take back each runtime step, recorded before the step runs.
    sql: `
      CREATE TABLE intents (
        id INTEGER PRIMARY KEY,
        area TEXT NOT NULL,
        request_id TEXT,
        started_at INTEGER NOT NULL,
        files TEXT NOT NULL,
        undo TEXT NOT NULL DEFAULT '[]'
      );
    `,
  },
  {
    version: 5,
    name: 'jobs: long operations, their progress, log tail and answer (runtime/jobs/)',
    // A long route runs as a job whether the client waits or not: the row outlives the request
    // (and the host: a job left running at start becomes `interrupted`). job_events holds what
    // the SSE stream replays after Last-Event-ID; both are pruned by age and count.
    sql: `
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        method TEXT NOT NULL,
        route TEXT NOT NULL,
        path TEXT NOT NULL,
        area TEXT NOT NULL,
        token_id TEXT,
        state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted')),
        progress TEXT,
        status INTEGER,
        result TEXT,
        error TEXT,
        undo TEXT,
        budget_ms INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER
      );
      CREATE INDEX jobs_state ON jobs(state);
      CREATE INDEX jobs_request ON jobs(request_id);
      CREATE TABLE job_events (
        job_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('progress', 'log', 'state')),
        at INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (job_id, seq)
      );
    `,
  },
  {
    version: 6,
    name: 'network: a change waiting for its confirmation, with its checkpoint (files, runtime state, undo)',
    // runtime/areas/network/checkpoint-store.ts. One row at most (the unique index on a constant):
    // a second change while one waits is refused. `preparing` while the change is being applied
    // (its intent journal row covers a crash then); `pending` once applied, with its deadline.
    sql: `
      CREATE TABLE network_checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        state TEXT NOT NULL CHECK (state IN ('preparing', 'pending')),
        area TEXT NOT NULL,
        change TEXT NOT NULL,
        devices TEXT NOT NULL,
        request_id TEXT,
        created_at INTEGER NOT NULL,
        window_s INTEGER NOT NULL,
        deadline INTEGER,
        runtime TEXT NOT NULL,
        files TEXT NOT NULL DEFAULT '[]',
        undo TEXT NOT NULL DEFAULT '[]',
        rules TEXT NOT NULL DEFAULT '[]'
      );
      CREATE UNIQUE INDEX network_checkpoints_one ON network_checkpoints ((1));
    `,
  },
];
