/**
 * The schema for other runtimes: dist/migrations/NNNN_<name>.sql (written by build.mjs from
 * runtime/db/migrations.ts) applied in order to an empty SQLite file give exactly the schema the
 * Node host's openDatabase creates, and the token CLI works on any database file (--db).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../runtime/db/migrations';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { distDir } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const dir = join(distDir, 'migrations');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.sql'))
  .sort();

type Row = Record<string, unknown>;
const schemaOf = (db: SqliteDb | Database.Database) =>
  db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as Row[];
const versionsOf = (db: SqliteDb | Database.Database) =>
  db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Row[];

function fromSqlFiles(file: string): Database.Database {
  const db = new Database(file);
  for (const f of files) db.exec(readFileSync(join(dir, f), 'utf8'));
  return db;
}

describe('SQL migrations in dist/', () => {
  it('one file per migration, named NNNN_<name>.sql in version order', () => {
    expect(files).toHaveLength(migrations.length);
    files.forEach((f, i) => {
      expect(f).toMatch(/^\d{4}_[a-z0-9_]+\.sql$/);
      expect(Number(f.slice(0, 4))).toBe(migrations[i].version);
      expect(readFileSync(join(dir, f), 'utf8')).toContain(
        `-- Migration ${migrations[i].version}: ${migrations[i].name}\n`,
      );
    });
  });

  it('applied to an empty SQLite file they give the schema openDatabase creates', () => {
    const d = privateDir('edge-migrations');
    const viaSql = fromSqlFiles(join(d, 'sql.db'));
    const viaHost = openDatabase(join(d, 'host.db'));
    const schema = schemaOf(viaHost);
    expect(schema.map((r) => r.name)).toEqual(expect.arrayContaining(['api_tokens', 'audit_log', 'events', 'intents']));
    expect(schemaOf(viaSql)).toEqual(schema);
    expect(versionsOf(viaSql)).toEqual(versionsOf(viaHost));
    viaSql.close();
    viaHost.close();
  });

  it('the host opens a database made from the files without applying anything again', () => {
    const d = privateDir('edge-migrations');
    const file = join(d, 'd1.db');
    const made = fromSqlFiles(file);
    const applied = made.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all();
    made.close();
    const db = openDatabase(file);
    expect(db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all()).toEqual(applied);
    db.close();
  });
});

describe('ballast token --db FILE', () => {
  const cli = join(distDir, 'host', 'cli.mjs');
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, 'token', ...args], { encoding: 'utf8' });

  it('creates the schema in a new file, then creates, lists and revokes tokens in it', () => {
    const file = join(privateDir('edge-token'), 'sub', 'new.db');
    const c = run('create', 'deno-admin', '--perm', '*', '--db', file);
    expect(c.status, c.stderr).toBe(0);
    expect(c.stdout).toMatch(
      /^created token [0-9a-f]{12} \(deno-admin\); it is shown only this once:\nblt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n$/,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const l = run('list', '--json', '--db', file);
    expect(l.status, l.stderr).toBe(0);
    expect((JSON.parse(l.stdout) as Row[]).map((t) => [t.name, t.permissions])).toEqual([['deno-admin', ['*']]]);
    expect(run('revoke', 'deno-admin', '--db', file).stdout).toBe('revoked deno-admin\n');
  });

  it('works on a database made from dist/migrations (a D1 deployment)', () => {
    const file = join(privateDir('edge-token'), 'd1.db');
    fromSqlFiles(file).close();
    const c = run('create', 'edge', '--perm', 'kerberos:read', '--db', file);
    expect(c.status, c.stderr).toBe(0);
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT name, permissions FROM api_tokens').all()).toEqual([
      { name: 'edge', permissions: '["kerberos:read"]' },
    ]);
    db.close();
  });

  it('--db with --config or --demo is a usage error', () => {
    const r = run('list', '--db', '/tmp/x.db', '--demo');
    expect([r.status, r.stderr]).toEqual([2, 'ballast: --db excludes --config and --demo\n']);
  });
});
