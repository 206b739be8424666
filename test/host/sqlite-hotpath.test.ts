/**
 * The SQLite work of a request: token rows come from a short cache that a revocation empties
 * at once (from another process's connection, as `ballast token revoke` does, or in-process),
 * and audit rows are written in one batch per event-loop turn and pruned by age and count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import * as z from 'zod';
import { route } from '../../handlers/core/route';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { dbFile } from '../../runtime/config';
import { revokeToken } from '../../runtime/tokens';
import {
  AUDIT_BATCH_MAX,
  BatchedAudit,
  committedOpAudit,
  insertManyOf,
  opAudit,
  type AuditRow,
} from '../../runtime/db/audit';
import { serve, type Serving } from '../../runtime/serve';
import { makeTestConfig, makeTestHost, fixture, distDir, type TestHost } from '../helpers/host';
import { createToken } from '../../runtime/tokens';
import { privateDir } from '../helpers/tmp';
import { errorOf } from '../helpers/answers';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

const ping = route({
  method: 'GET',
  path: '/speedtest/ping',
  permission: 'speedtest:read',
  summary: 'token check only',
  response: z.object({ ok: z.literal(true) }),
  async handler() {
    return { ok: true as const };
  },
});

const klist = route({
  method: 'POST',
  path: '/speedtest/klist',
  permission: 'speedtest:read',
  summary: 'one command',
  response: z.object({ out: z.string() }),
  async handler({ system }) {
    return { out: (await system.run(['/usr/bin/klist', '-A'])).stdout };
  },
});

describe('token cache', () => {
  let t: TestHost;
  let other: SqliteDb;
  beforeAll(async () => {
    t = await makeTestHost({ routes: [ping] });
    // a second connection to the same file: what `ballast token revoke` opens in its own process
    other = openDatabase(dbFile(t.config));
  });
  afterAll(async () => {
    other.close();
    await t.close();
  });

  it('a token row is reused without a query while nothing else wrote', async () => {
    const tok = await t.token(['*'], 'cached-one');
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
    // a raw change through the host's own connection is not seen while the row is cached…
    t.host.db.prepare("UPDATE api_tokens SET permissions = '[]' WHERE name = 'cached-one'").run();
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
    // …and any write by another connection empties the cache (PRAGMA data_version)
    other.prepare("INSERT INTO audit_log (at, kind) VALUES (0, 'other-connection')").run();
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(403);
  });

  it('a revocation from another process takes effect at the next request', async () => {
    const tok = await t.token(['*'], 'revoke-elsewhere');
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
    expect(revokeToken(other, 'revoke-elsewhere')).toBe(true);
    const r = await t.call('GET', '/api/v2/speedtest/ping', { token: tok });
    expect(r.status).toBe(401);
    expect(errorOf(r).message).toBe('token revoked');
  });

  it('a revocation in this process takes effect at the next request', async () => {
    const tok = await t.token(['*'], 'revoke-here');
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
    expect(revokeToken(t.host.db, 'revoke-here')).toBe(true);
    const r = await t.call('GET', '/api/v2/speedtest/ping', { token: tok });
    expect(r.status).toBe(401);
    expect(errorOf(r).message).toBe('token revoked');
  });

  it('a token created by another process works at once (an unknown id is not remembered past a write)', async () => {
    const { token } = await createToken(other, 'made-elsewhere', ['speedtest:read']);
    expect((await t.call('GET', '/api/v2/speedtest/ping', { token })).status).toBe(200);
  });

  it('tokenCacheMs: 0 reads the row at every request', async () => {
    const u = await makeTestHost({ routes: [ping], config: { limits: { tokenCacheMs: 0 } } as never });
    try {
      const tok = await u.token(['*'], 'uncached');
      expect((await u.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(200);
      u.host.db.prepare("UPDATE api_tokens SET revoked_at = 1 WHERE name = 'uncached'").run();
      expect((await u.call('GET', '/api/v2/speedtest/ping', { token: tok })).status).toBe(401);
    } finally {
      await u.close();
    }
  });
});

describe('token revoke from the real CLI while the host serves', () => {
  it('the next request over HTTP is 401', async () => {
    const { config, state } = makeTestConfig();
    const configFile = join(state, 'config.yaml');
    writeFileSync(configFile, stringify(config));
    const s: Serving = await serve({
      config,
      distDir,
      routes: [ping],
      signals: false,
      accessLog: false,
      log: () => undefined,
    });
    try {
      const { token } = await createToken(s.host.db, 'cli-revoked', ['*']);
      const get = () => fetch(`${s.server.url}/api/v2/speedtest/ping`, { headers: { token } });
      for (let i = 0; i < 2; i++) expect((await get()).status).toBe(200);
      execFileSync(process.execPath, [
        join(distDir, 'host/cli.mjs'),
        'token',
        'revoke',
        'cli-revoked',
        '--config',
        configFile,
      ]);
      const r = await get();
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: { message: string } }).error.message).toBe('token revoked');
    } finally {
      await s.stop();
    }
  });
});

describe('audit batching and retention', () => {
  const row = (at: number, kind = 'exec'): AuditRow => ({
    at,
    requestId: null,
    kind,
    argv: '[]',
    exitCode: 0,
    durationMs: 1,
    note: null,
  });
  const count = (db: SqliteDb) => (db.prepare('SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;

  it('rows of one turn are written together at its end', async () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    const audit = new BatchedAudit(db, { maxAgeDays: 30, maxRows: 1000 });
    try {
      for (let i = 0; i < 5; i++) audit.write(row(Date.now()));
      expect(count(db)).toBe(0);
      await new Promise<void>((r) => setImmediate(r));
      expect(count(db)).toBe(5);
      expect(audit.whenWritten()).toBeUndefined();
      audit.write(row(Date.now(), 'pty'));
      const written = audit.whenWritten();
      expect(audit.whenWritten()).toBe(written);
      expect(count(db)).toBe(5);
      await written; // the host answers only after this
      expect(count(db)).toBe(6);
      audit.write(row(Date.now(), 'pty'));
      audit.close(); // close writes what waits
      expect(count(db)).toBe(7);
    } finally {
      db.close();
    }
  });

  it("an area op's row goes through the database's batch while a host writes for it; autocommit without one", async () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    const op = opAudit(db);
    const opRow = { kind: 'fs/explore', requestId: 'req-1', argv: ['/srv'], note: 'walked' };
    const audit = new BatchedAudit(db, { maxAgeDays: 30, maxRows: 1000 });
    try {
      op(opRow);
      audit.write(row(Date.now()));
      expect(count(db)).toBe(0);
      await audit.whenWritten();
      expect(count(db)).toBe(2);
      expect(db.prepare("SELECT kind, request_id, argv, note FROM audit_log WHERE kind = 'fs/explore'").get()).toEqual({
        kind: 'fs/explore',
        request_id: 'req-1',
        argv: '["/srv"]',
        note: 'walked',
      });
    } finally {
      audit.close();
    }
    try {
      op(opRow); // the host is gone: written at once
      expect(count(db)).toBe(3);
    } finally {
      db.close();
    }
  });

  it("a committed op row is on disk when the call returns, after the batch's waiting rows; a refused row throws", () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    const audit = new BatchedAudit(db, { maxAgeDays: 30, maxRows: 1000 });
    const committed = committedOpAudit(db);
    const repair = { kind: 'certificate/trust', requestId: 'req-9', argv: ['/x/ca.crt'], note: 'rolled back' };
    try {
      audit.write(row(Date.now()));
      committed(repair);
      // another connection sees both rows: committed, not waiting for the end of the turn
      const other = openDatabase(join(dir, 'db.sqlite'));
      try {
        expect(other.prepare('SELECT kind, request_id, argv, note FROM audit_log ORDER BY id').all()).toEqual([
          { kind: 'exec', request_id: null, argv: '[]', note: null },
          { kind: 'certificate/trust', request_id: 'req-9', argv: '["/x/ca.crt"]', note: 'rolled back' },
        ]);
      } finally {
        other.close();
      }
      expect(audit.whenWritten()).toBeUndefined();
      db.exec("CREATE TRIGGER refuse BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'disk full'); END");
      expect(() => committed(repair)).toThrow('disk full');
      expect(count(db)).toBe(2);
    } finally {
      audit.close();
      db.close();
    }
  });

  it('rows are written with every column, in order, by multi-row INSERTs of at most AUDIT_BATCH_MAX rows', () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    try {
      const insertMany = insertManyOf(db);
      const made = (n: number, from: number): AuditRow[] =>
        Array.from({ length: n }, (_, k) => {
          const i = from + k;
          return {
            at: 1_000 + i,
            requestId: i % 3 === 0 ? null : `req-${i}`,
            kind: i % 2 === 0 ? 'exec' : 'pty',
            argv: JSON.stringify([`/usr/bin/tool-${i}`, '--', `x${i}`]),
            exitCode: i % 4 === 0 ? null : i,
            durationMs: i % 5 === 0 ? null : 10 * i,
            note: i % 6 === 0 ? `note ${i}` : null,
          };
        });
      const rows = [...made(1, 0), ...made(AUDIT_BATCH_MAX, 1), ...made(2 * AUDIT_BATCH_MAX + 3, 1 + AUDIT_BATCH_MAX)];
      // one call per size: 1 row, exactly a batch, and more than two batches (chunked)
      expect(insertMany(rows.slice(0, 1))).toBe(1);
      expect(insertMany(rows.slice(1, 1 + AUDIT_BATCH_MAX))).toBe(1 + AUDIT_BATCH_MAX);
      expect(insertMany(rows.slice(1 + AUDIT_BATCH_MAX))).toBe(rows.length);
      const stored = db
        .prepare('SELECT id, at, request_id, kind, argv, exit_code, duration_ms, note FROM audit_log ORDER BY id')
        .all();
      expect(stored).toEqual(
        rows.map((r, i) => ({
          id: i + 1,
          at: r.at,
          request_id: r.requestId,
          kind: r.kind,
          argv: r.argv,
          exit_code: r.exitCode,
          duration_ms: r.durationMs,
          note: r.note,
        })),
      );
      expect(stored.length).toBe(3 * AUDIT_BATCH_MAX + 4);
      // a statement per row count, prepared once, none binding more than AUDIT_BATCH_MAX rows
      const prepared: string[] = [];
      const prepare = db.prepare.bind(db);
      db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
      const again = insertManyOf(db);
      again(made(AUDIT_BATCH_MAX + 1, 100));
      again(made(AUDIT_BATCH_MAX + 1, 200));
      again(made(1, 300));
      const rowsBound = prepared.map((sql) => sql.split('?').length - 1).map((params) => params / 7);
      expect(rowsBound).toEqual([AUDIT_BATCH_MAX, 1]);
      expect(count(db)).toBe(3 * AUDIT_BATCH_MAX + 4 + 2 * (AUDIT_BATCH_MAX + 1) + 1);
    } finally {
      db.close();
    }
  });

  it('a batch that reaches AUDIT_BATCH_MAX rows is committed at once, not at the end of the turn', async () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    const audit = new BatchedAudit(db, { maxAgeDays: 30, maxRows: 1000 });
    try {
      for (let i = 0; i < AUDIT_BATCH_MAX - 1; i++) audit.write(row(Date.now()));
      const written = audit.whenWritten();
      let settled = false;
      void written!.then(() => (settled = true));
      expect(count(db)).toBe(0);
      audit.write(row(Date.now()));
      expect(count(db)).toBe(AUDIT_BATCH_MAX);
      expect(audit.whenWritten()).toBeUndefined();
      await Promise.resolve();
      expect(settled).toBe(true); // the requests that waited answer in this turn
      audit.write(row(Date.now()));
      expect(count(db)).toBe(AUDIT_BATCH_MAX);
      await new Promise<void>((r) => setImmediate(r));
      expect(count(db)).toBe(AUDIT_BATCH_MAX + 1);
    } finally {
      audit.close();
      db.close();
    }
  });

  it('prunes rows older than maxAgeDays and all but the newest maxRows, at start and as rows come', async () => {
    const dir = privateDir('ballast-speed-audit');
    const db = openDatabase(join(dir, 'db.sqlite'));
    const now = Date.now();
    const insert = db.prepare("INSERT INTO audit_log (at, kind, note) VALUES (?, 'exec', ?)");
    for (let i = 0; i < 10; i++) insert.run(now - 3 * 86_400_000, `old-${i}`);
    for (let i = 0; i < 300; i++) insert.run(now, `new-${i}`);
    const audit = new BatchedAudit(db, { maxAgeDays: 2, maxRows: 250 });
    try {
      // at start: the 10 old rows by age, then the 50 oldest of the rest by count
      const notes = (db.prepare('SELECT note FROM audit_log ORDER BY id').all() as { note: string }[]).map(
        (r) => r.note,
      );
      expect(notes.length).toBe(250);
      expect(notes[0]).toBe('new-50');
      expect(notes.at(-1)).toBe('new-299');
      // every batch keeps the table at the newest 250, whatever its size
      for (let i = 0; i < 100; i++) {
        audit.write({ ...row(now), note: `later-${i}` });
        if (i % 7 === 0) audit.flush();
        expect(count(db) + audit['pending'].length).toBeLessThanOrEqual(250 + AUDIT_BATCH_MAX);
      }
      audit.flush();
      expect(count(db)).toBe(250);
      const first = db.prepare('SELECT note FROM audit_log ORDER BY id LIMIT 1').get() as { note: string };
      expect(first.note).toBe('new-150');
      const last = db.prepare('SELECT note FROM audit_log ORDER BY id DESC LIMIT 1').get() as { note: string };
      expect(last.note).toBe('later-99');
      // by age, hourly (and at start): rows older than 2 days go, the newer stay
      db.prepare("UPDATE audit_log SET at = ? WHERE note IN ('new-150', 'new-151')").run(now - 3 * 86_400_000);
      expect(audit.pruneByAge(now)).toBe(2);
      expect(count(db)).toBe(248);
    } finally {
      audit.close();
      db.close();
    }
  });

  it('the host writes a command’s audit row before its answer arrives (HTTP and in-process)', async () => {
    const t = await makeTestHost({
      routes: [klist],
      fixtures: [fixture(['/usr/bin/klist', '-A'], 'tickets\n')],
    });
    try {
      const r = await t.call('POST', '/api/v2/speedtest/klist', { body: {} });
      expect(r.status).toBe(200);
      const rows = t.host.db.prepare("SELECT argv, exit_code FROM audit_log WHERE kind = 'exec'").all();
      expect(rows).toEqual([{ argv: '["/usr/bin/klist","-A"]', exit_code: 0 }]);
    } finally {
      await t.close();
    }
    const { config } = makeTestConfig();
    const s: Serving = await serve({
      config,
      distDir,
      routes: [klist],
      backend: new (await import('../../runtime/system/replay')).ReplayBackend([
        fixture(['/usr/bin/klist', '-A'], 'tickets\n'),
      ]),
      signals: false,
      accessLog: false,
      log: () => undefined,
    });
    try {
      const { token } = await createToken(s.host.db, 'http', ['*']);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${s.server.url}/api/v2/speedtest/klist`, {
          method: 'POST',
          headers: { token, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(res.status).toBe(200);
        await res.text();
        expect(
          (s.host.db.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE kind = 'exec'").get() as { n: number }).n,
        ).toBe(i + 1);
      }
    } finally {
      await s.stop();
    }
  });
});
