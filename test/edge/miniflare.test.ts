/**
 * dist/app.mjs in a Workers deployment, as Workers users run one locally: Miniflare's own API
 * (the `miniflare` package), the module as the worker, a real D1 database made from
 * dist/migrations/*.sql, SYSTEM a service binding answered by a demo host's SystemService (the
 * demo's replayed commands and its files) and EVENTS_FETCH one answered by the host's events
 * binding. Every GET example (no `before` steps, no side effects) answers as the host itself
 * answers it: same status, same body (request ids and times masked).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare, Response as MfResponse, type Request as MfRequest } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, readManifest, type Host } from '../../runtime/host';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { createToken } from '../../runtime/tokens';
import { examplePath } from '../../runtime/demo-examples';
import type { RouteExample } from '../../handlers/core/route';
import type { SqliteDb } from '../../runtime/db/database';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');

type MiniflareD1 = Awaited<ReturnType<Miniflare['getD1Database']>>;

/** A Node function as a service binding: Miniflare's Request in, Miniflare's Response out. */
const serviceOf =
  (answer: (request: Request) => Promise<Response>) =>
  async (request: MfRequest): Promise<MfResponse> => {
    const r = await answer(
      new Request(request.url, { method: request.method, headers: request.headers, body: await request.text() }),
    );
    return new MfResponse(await r.arrayBuffer(), { status: r.status, headers: [...r.headers] });
  };

let state: string;
let host: Host;
let mf: Miniflare;
let d1: MiniflareD1;
let mfToken: string;
let hostToken: string;

/**
 * A token made by the host's one createToken (its format and hash), its row written into D1:
 * createToken writes through a synchronous prepare().run(), which this records.
 */
async function d1Token(db: MiniflareD1): Promise<string> {
  let row: { sql: string; args: unknown[] } | undefined;
  const recorder = { prepare: (sql: string) => ({ run: (...args: unknown[]) => void (row = { sql, args }) }) };
  const { token } = await createToken(recorder as unknown as SqliteDb, 'workers-admin', ['*']);
  if (!row) throw new Error('createToken wrote no row');
  await db
    .prepare(row.sql)
    .bind(...row.args)
    .run();
  return token;
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'ballast-miniflare-'));
  const config = demoConfig(repo, 0, state);
  seedDemo(repo, config);
  host = await createHost({ config, distDir: dist, log: () => undefined });
  hostToken = (await createToken(host.db, 'admin', ['*'])).token;
  mf = new Miniflare({
    modules: true,
    scriptPath: join(dist, 'app.mjs'),
    compatibilityDate: '2025-01-01',
    d1Databases: { DB: 'ballast' },
    d1Persist: join(state, 'd1'),
    bindings: { VARS: JSON.parse(JSON.stringify(host.vars)) as Record<string, unknown> },
    // Node functions as service bindings: the host's own SYSTEM and events endpoints
    serviceBindings: {
      SYSTEM: serviceOf((r) => host.bindings.fetchSystem(r)),
      EVENTS_FETCH: serviceOf((r) => host.bindings.fetchEvents(r)),
    },
  });
  d1 = await mf.getD1Database('DB');
  for (const f of readdirSync(join(dist, 'migrations')).sort()) {
    // one statement at a time: each file is plain `;`-terminated statements (no triggers)
    const statements = readFileSync(join(dist, 'migrations', f), 'utf8')
      .replace(/^--.*$/gm, '')
      .split(/;\s*$/m)
      .map((s) => s.trim())
      .filter(Boolean);
    await d1.batch(statements.map((s) => d1.prepare(s)));
  }
  mfToken = await d1Token(d1);
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  await host?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

const mask = (text: string) =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<date>')
    // what each run counts and times on its own: uptime, metric values
    .replace(/"uptimeS":\d+/g, '"uptimeS":<s>')
    // which labelled samples of the host's Node process exist (GC kinds seen so far) is its moment
    .replace(/^ballast_(nodejs|process)_[a-z0-9_]*\{[^}\n]*\} \S+\n/gm, '')
    .replace(/^([a-z_:][a-zA-Z0-9_:]*(\{[^}\n]*\})?) \S+$/gm, '$1 <value>');

describe('dist/app.mjs under Miniflare (D1 from dist/migrations, SYSTEM a service binding)', () => {
  it('has the schema the migrations make, and the token row the host would write', async () => {
    const tables = await d1
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name")
      .all<{ name: string }>();
    expect(tables.results.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['api_tokens', 'schema_migrations']),
    );
    const versions = await d1
      .prepare('SELECT version FROM schema_migrations ORDER BY version')
      .all<{ version: number }>();
    expect(versions.results.map((v: { version: number }) => v.version)).toEqual(
      readdirSync(join(dist, 'migrations'))
        .sort()
        .map((f) => Number(f.slice(0, 4))),
    );
    const unauth = await mf.dispatchFetch('http://appliance.local/api/v2/kerberos/conf');
    expect(unauth.status).toBe(401);
  });

  it('answers every GET example as the host does', async () => {
    const manifest = readManifest(dist) as (ReturnType<typeof readManifest>[number] & { examples?: RouteExample[] })[];
    const compared: string[] = [];
    const differ: string[] = [];
    for (const route of manifest) {
      if (route.method !== 'GET' || route.sideEffects) continue;
      for (const example of route.examples ?? []) {
        if (example.before?.length) continue;
        const path = examplePath(route.path, example);
        const viaWorkers = await mf.dispatchFetch(`http://appliance.local${path}`, { headers: { token: mfToken } });
        const viaHost = await host.app.fetch(
          new Request(`http://appliance.local${path}`, { headers: { token: hostToken } }),
          host.env,
        );
        const a = { status: viaWorkers.status, body: mask(await viaWorkers.text()) };
        const b = { status: viaHost.status, body: mask(await viaHost.text()) };
        compared.push(`${path} ${b.status}`);
        if (a.status !== b.status || a.body !== b.body)
          differ.push(
            `${path}: workers ${a.status} ${a.body.slice(0, 200)} / host ${b.status} ${b.body.slice(0, 200)}`,
          );
      }
    }
    expect(differ).toEqual([]);
    expect(compared.length).toBeGreaterThan(30);
    // most of them answer 200: the replayed commands and the demo's files came through SYSTEM
    expect(compared.filter((c) => c.endsWith(' 200')).length).toBeGreaterThan(25);
  }, 300_000);
});
