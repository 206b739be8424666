/**
 * Operating the appliance (issue 29) on a served demo: the JSON log of authenticated, refused
 * and command-running requests carries every field and no secret; /metrics, read with a
 * Prometheus text parser after known traffic, counts exactly that traffic; the metrics listener
 * answers without a token; health answers 503 while the database file is unreadable or gone.
 */
import { chmodSync, renameSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { dbFile } from '../../runtime/config';
import { serve, type Serving } from '../../runtime/serve';
import type { ReplayBackend } from '../../runtime/system/replay';
import { createToken } from '../../runtime/tokens';
import { capturedLogger, distDir, hostLogLines, repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { parsePrometheusText, sampleValue } from './prom-text';

let s: Serving;
let base: string;
let admin: string;
const lines: string[] = [];
const secrets: string[] = [];
const QUERY_SECRET = 'hunter2-query-secret';

beforeAll(async () => {
  const config = demoConfig(repo, 0, privateDir('ballast-ops'));
  config.metrics.listen = '127.0.0.1:0';
  seedDemo(repo, config);
  s = await serve({
    config,
    distDir,
    signals: false,
    logger: capturedLogger((l) => lines.push(l)),
    replayCallsKept: 1000,
  });
  base = `${s.server.url}/api/v2`;
  admin = (await createToken(s.host.db, 'ops-admin', ['*'])).token;
  secrets.push(admin);
});
afterAll(async () => {
  await s?.stop();
});

const get = (path: string, token?: string, id?: string) =>
  fetch(`${base}${path}`, { headers: { ...(token ? { token } : {}), ...(id ? { 'x-request-id': id } : {}) } });
const post = (path: string, body: unknown, token: string) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const logged = () =>
  lines.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('known traffic, then the log and the metrics', () => {
  let made: { id: string; token: string };
  let reader: string;
  const wrong = `blt_0123456789ab_${'x'.repeat(43)}`;
  beforeAll(async () => {
    secrets.push(wrong, QUERY_SECRET);
    expect((await get('/health')).status).toBe(200);
    expect((await get('/network/interface', admin, 'ops-auth-0001')).status).toBe(200);
    expect((await get('/network/interface', admin)).status).toBe(200);
    expect((await get('/network/interface', wrong, 'ops-denied-0001')).status).toBe(401);
    expect((await get(`/kerberos/conf?password=${QUERY_SECRET}`, admin, 'ops-query-0001')).status).toBe(400);
    const r = await post('/tokens', { name: 'scraper', permissions: ['metrics:read'] }, admin);
    expect(r.status).toBe(200);
    made = (await r.json()) as typeof made;
    secrets.push(made.token);
    reader = (await createToken(s.host.db, 'reader', ['fs:read'])).token;
    secrets.push(reader);
    expect((await post('/tokens', { name: 'sneaky', permissions: ['fs:read'] }, reader)).status).toBe(403);
  });

  it('counts exactly that traffic in /metrics (parsed as Prometheus text)', async () => {
    const r = await get('/metrics', made.token);
    expect([r.status, r.headers.get('content-type')]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
    const m = parsePrometheusText(await r.text());
    const req = (route: string, status: string, method = 'GET') =>
      sampleValue(m, 'ballast_http_requests_total', { method, route: `/api/v2${route}`, status });
    expect(req('/network/interface', '200')).toBe(2);
    expect(req('/network/interface', '401')).toBe(1);
    expect(req('/kerberos/conf', '400')).toBe(1);
    expect(req('/tokens', '200', 'POST')).toBe(1);
    expect(req('/tokens', '403', 'POST')).toBe(1);
    expect(req('/health', '200')).toBe(1);
    expect(m.get('ballast_http_request_duration_seconds')?.type).toBe('histogram');
    expect(
      sampleValue(m, 'ballast_http_request_duration_seconds_count', {
        route: '/api/v2/network/interface',
        status: '200',
      }),
    ).toBe(2);
    // every command the replay back end answered, by tool
    const ran = (s.host.backend as ReplayBackend).calls.map((c) => basename(c.argv[0]));
    expect(ran.length).toBeGreaterThan(0);
    for (const tool of new Set(ran)) {
      const n = ran.filter((t) => t === tool).length;
      expect([tool, sampleValue(m, 'ballast_commands_total', { tool, exit_code: '0' })]).toEqual([tool, n]);
      expect([tool, sampleValue(m, 'ballast_command_duration_seconds_count', { tool })]).toEqual([tool, n]);
    }
    const rows = s.host.db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
    expect(sampleValue(m, 'ballast_audit_rows')).toBe(rows);
    expect(sampleValue(m, 'ballast_db_size_bytes')).toBeGreaterThan(4096);
    expect(sampleValue(m, 'ballast_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(m.has('ballast_nodejs_eventloop_lag_seconds')).toBe(true);
    // jobs by state, from the registry (the traffic above ran no long route)
    const jobs = s.host.jobs.registry.countsByState();
    for (const state of ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted'])
      expect([state, sampleValue(m, 'ballast_jobs', { state })]).toEqual([state, jobs[state]]);
  });

  it('refuses /metrics without metrics:read', async () => {
    expect((await get('/metrics')).status).toBe(401);
    expect((await get('/metrics', reader)).status).toBe(403);
  });

  it('logs each request as one JSON line with every field, the token by id and name', () => {
    const all = logged();
    const ok = all.find((l) => l.reqId === 'ops-auth-0001' && l.msg === 'request');
    expect(ok).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/api/v2/network/interface',
      status: 200,
      token: { id: admin.slice(4, 16), name: 'ops-admin' },
      remote: '127.0.0.1',
      area: 'network',
      route: '/api/v2/network/interface',
    });
    expect(typeof ok?.time).toBe('number');
    expect(typeof ok?.ms).toBe('number');
    const denied = all.find((l) => l.reqId === 'ops-denied-0001' && l.msg === 'request');
    expect(denied).toMatchObject({ status: 401, token: null, area: 'network' });
    const query = all.find((l) => l.reqId === 'ops-query-0001' && l.msg === 'request');
    expect(query?.query).toEqual({ password: '***' });
    const commands = all.filter((l) => l.reqId === 'ops-auth-0001' && l.msg === 'command');
    expect(commands.length).toBeGreaterThan(0);
    for (const c of commands) {
      expect(c).toMatchObject({ level: 'info', exitCode: 0 });
      expect(c.tool).toMatch(/^[a-z][a-z0-9-]*$/); // the binary's name, never '?' or a path
      expect(typeof c.ms).toBe('number');
    }
    expect(commands.map((c) => c.tool)).toContain('ip');
    expect(all.some((l) => String(l.msg).includes('API listening on'))).toBe(true);
  });

  it('writes the change and the refusal to the audit trail, with who and the outcome', async () => {
    const r = await get('/audit?outcome=failure', admin);
    const trail = (await r.json()) as { items: { path: string; status: number; token: unknown; outcome: string }[] };
    expect(trail.items.map((i) => [i.path, i.status, i.outcome])).toEqual(
      expect.arrayContaining([
        ['/api/v2/tokens', 403, 'failure'],
        ['/api/v2/network/interface', 401, 'failure'],
      ]),
    );
    const mine = (await (await get(`/audit?token=ops-admin`, admin)).json()) as { items: { path: string }[] };
    expect(mine.items.map((i) => i.path)).toContain('/api/v2/tokens');
  });

  it('serves the metrics on metrics.listen without a token, and nothing else there', async () => {
    const url = s.metricsServer?.url ?? '';
    const r = await fetch(url);
    expect(r.status).toBe(200);
    expect(
      sampleValue(parsePrometheusText(await r.text()), 'ballast_http_requests_total', { route: '/api/v2/health' }),
    ).toBe(1);
    expect((await fetch(url.replace(/\/metrics$/, '/api/v2/tokens'))).status).toBe(404);
  });

  it('never logs a secret: tokens, a failed token, a query password', () => {
    s.logger.flush();
    const text = [...lines, ...hostLogLines].join('\n');
    expect(text.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      // the part after the id is the secret itself
      expect(text).not.toContain(secret.slice(17));
    }
  });
});

describe('health', () => {
  it('answers 200 and the report without a token', async () => {
    const r = await get('/health');
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      status: 'ok',
      db: 'ok',
      isolate: null,
      outbox: { pending: 0, failing: 0 },
      jobs: { running: 0 },
    });
    expect(await (await get('/version')).json()).toMatchObject({ name: 'Ballast Demo Appliance', api: 'v2' });
  });

  it('answers 503 while the database file is unreadable, and 200 again after', async () => {
    const file = dbFile(s.host.config);
    chmodSync(file, 0o000);
    try {
      const r = await get('/health');
      expect([r.status, ((await r.json()) as { db: string; status: string }).db]).toEqual([503, 'unavailable']);
    } finally {
      chmodSync(file, 0o600);
    }
    expect((await get('/health')).status).toBe(200);
  });

  it('answers 503 while the database file is gone (moved away)', async () => {
    const file = dbFile(s.host.config);
    renameSync(file, `${file}.away`);
    try {
      expect((await get('/health')).status).toBe(503);
    } finally {
      renameSync(`${file}.away`, file);
    }
    expect((await get('/health')).status).toBe(200);
  });
});
