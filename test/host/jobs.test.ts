/**
 * Host tier, long routes as jobs (runtime/jobs/): real processes (sleep, touch under a live back
 * end) behind test routes that declare `long`, the jobs routes as built from source, and the
 * real HTTP server for the request limit. What a job records, what a cancel stops and rolls
 * back, what the budget and the 504 do, and who sees which job.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route, type RouteModule } from '../../handlers/core/route';
import { LiveBackend } from '../../runtime/system/exec-live';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { makeTestConfig, makeTestHost, distDir, type TestHost } from '../helpers/host';
import listJobs from '../../handlers/jobs/routes/list';
import jobDetails from '../../handlers/jobs/routes/details';
import jobEvents from '../../handlers/jobs/routes/events';
import jobCancel from '../../handlers/jobs/routes/cancel';
import jobResult from '../../handlers/jobs/routes/result';
import type { Job } from '../../handlers/core/job';
import { prefersAsync } from '../../runtime/jobs/gate';
import { maskSecrets } from '../../runtime/jobs/mask';
import { JobRegistry } from '../../runtime/jobs/registry';
import { openDatabase } from '../../runtime/db/database';
import { createBallastClient } from '../../package/client';
import { privateDir } from '../helpers/tmp';

const SLEEP = existsSync('/usr/bin/sleep') ? '/usr/bin/sleep' : '/bin/sleep';
const TOUCH = existsSync('/usr/bin/touch') ? '/usr/bin/touch' : '/bin/touch';

/** `steps` sleeps of `seconds` each, a progress report before each: a long route in miniature. */
const slow = route({
  method: 'POST',
  path: '/fs/test_slow',
  permission: 'fs:manage',
  long: { budgetS: 20, phases: ['wait'] },
  summary: 'test: sleeps',
  body: z.strictObject({ seconds: z.number(), steps: z.number().int().min(1).default(1) }),
  response: z.strictObject({ slept: z.number() }),
  async handler({ body, system }) {
    for (let i = 0; i < body.steps; i++) {
      await system.progress({ phase: 'wait', step: i + 1, steps: body.steps, message: `sleep ${i + 1}` });
      await system.run([SLEEP, String(body.seconds)]);
    }
    return { slept: body.steps };
  },
});

/** A journaled change that stops half way: the file written, an undo recorded, then a long sleep. */
function journaled(file: string, marker: string): RouteModule {
  return route({
    method: 'POST',
    path: '/fs/test_change',
    permission: 'fs:manage',
    long: { budgetS: 2, phases: ['change'] },
    summary: 'test: a journaled change',
    body: z.strictObject({ seconds: z.number() }),
    response: z.strictObject({ changed: z.boolean() }),
    async handler({ body, system }) {
      const id = await system.beginIntent('fs', [file]);
      await system.writeFile(file, 'new\n');
      await system.recordUndo(id, [[TOUCH, '--', marker]]);
      await system.run([SLEEP, String(body.seconds)]);
      await system.endIntent(id);
      return { changed: true };
    },
  });
}

/** The same sleeps on a route that is not long: stopped at the request limit. */
const plainSlow = route({
  method: 'POST',
  path: '/fs/test_plain_slow',
  permission: 'fs:manage',
  summary: 'test: sleeps, not a job',
  body: z.strictObject({ seconds: z.number(), steps: z.number().int() }),
  response: z.strictObject({ slept: z.number() }),
  async handler({ body, system }) {
    for (let i = 0; i < body.steps; i++) await system.run([SLEEP, String(body.seconds)]);
    return { slept: body.steps };
  },
});

const jobRoutes = [listJobs, jobDetails, jobEvents, jobCancel, jobResult];

function liveBackend(): LiveBackend {
  return new LiveBackend({
    allowedBinaries: new Set([SLEEP, TOUCH]),
    allowedEnv: new Set(),
    baseEnv: {},
    wrapper: [],
    limits: { timeoutMs: 30_000, maxOutputBytes: 1 << 20 },
  });
}

/** Processes whose argv is exactly this (the sleeps each test gives a unique length). */
function running(...argv: string[]): number {
  try {
    return execFileSync('pgrep', ['-fx', argv.join(' ')], { encoding: 'utf8' })
      .trim()
      .split('\n').length;
  } catch {
    return 0;
  }
}

async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An SSE text as its events. */
function sseEvents(text: string): { id: number; event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => {
      const f = Object.fromEntries(b.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      return { id: Number(f.id), event: f.event, data: JSON.parse(f.data) as Record<string, unknown> };
    });
}

describe('Prefer: respond-async', () => {
  it('is recognised among other preferences, in any case, with parameters; nothing else asks for it', () => {
    expect(prefersAsync('respond-async')).toBe(true);
    expect(prefersAsync('return=minimal, Respond-Async; wait=10')).toBe(true);
    expect(prefersAsync('respond-asynchronously')).toBe(false);
    expect(prefersAsync('return=minimal')).toBe(false);
    expect(prefersAsync(null)).toBe(false);
  });
});

describe('a job log line shows no secret', () => {
  it('masks tokens, password/secret pairs, private keys and URL userinfo; leaves the rest', () => {
    expect(maskSecrets('using blt_0123456789ab_' + 'A'.repeat(43) + ' now')).toBe('using blt_******** now');
    expect(maskSecrets('kinit: password=hunter2 secret_key: "a b" token=x')).toBe(
      'kinit: password=******** secret_key: ******** token=********',
    );
    expect(maskSecrets('-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- tail')).toBe('[private key] tail');
    expect(maskSecrets('fetch https://bob:pw@example.net/x failed')).toBe(
      'fetch https://********@example.net/x failed',
    );
    expect(maskSecrets('mke2fs 1.47.0 (5-Feb-2023)')).toBe('mke2fs 1.47.0 (5-Feb-2023)');
  });
});

describe('the registry keeps finished jobs by age and count', () => {
  it('the newest maxRows finished jobs and those younger than maxAge; a running one always', () => {
    const db = openDatabase(join(privateDir('jobs-prune'), 'db.sqlite'));
    const MIN = 60_000;
    const r = new JobRegistry(
      db,
      { maxAgeMs: 10 * MIN, maxRows: 2, eventsPerJob: 3, resultInlineBytes: 10 },
      () => '/api/v2',
    );
    const t0 = 1_000_000_000;
    const start = (n: number) =>
      r.create(
        {
          requestId: `req-${n}`,
          method: 'POST',
          route: '/api/v2/fs/x',
          path: '/api/v2/fs/x',
          area: 'fs',
          tokenId: 't',
          budgetMs: 1000,
        },
        t0 + n,
      );
    const end = { state: 'succeeded' as const, status: 200, resultText: '{"ok":true}', error: null, undo: null };
    const running = start(0);
    const ids = [1, 2, 3, 4].map(start);
    // a minute apart: each finish looks at what to prune (else every 64th does)
    for (const [i, id] of ids.entries()) r.finish(id, end, t0 + (i + 1) * (MIN + 1));
    const left = new Set(r.list({ limit: 10 }).map((j) => j.id));
    expect(left).toEqual(new Set([running, ids[2], ids[3]]));
    expect(db.prepare('SELECT COUNT(*) AS n FROM job_events WHERE job_id IN (?, ?)').get(ids[0], ids[1])).toEqual({
      n: 0,
    });
    // events per job: the newest 3
    for (let i = 0; i < 5; i++) r.log(running, `line ${i}`);
    expect(r.events(running, 0).map((e) => e.seq)).toEqual([4, 5, 6]);
    // an answer over resultInlineBytes is not inlined, but counted and kept whole
    expect(r.get(ids[3])).toMatchObject({ resultBytes: 11 });
    expect(r.get(ids[3])?.result).toBeUndefined();
    expect(r.resultOf(ids[3])).toEqual({ status: 200, text: '{"ok":true}' });
    // ended more than maxAge ago: gone at the next look (ids[3] ended at t0 + 4 min)
    const late = start(9);
    r.finish(late, end, t0 + 4 * (MIN + 1) + 10 * MIN + 1);
    expect([r.get(ids[2]), r.get(ids[3])]).toEqual([null, null]);
    expect(r.get(late)?.state).toBe('succeeded');
    expect(r.get(running)?.state).toBe('running');
    db.close();
  });
});

describe('the OpenAPI document shows every long route as one', () => {
  it('a 202 answer with the job, the Prefer header and x-long-operation on each, nowhere else', () => {
    const doc = JSON.parse(readFileSync(join(distDir, 'openapi.json'), 'utf8')) as {
      paths: Record<
        string,
        Record<
          string,
          { responses: Record<string, unknown>; parameters: { name: string }[]; 'x-long-operation'?: unknown }
        >
      >;
    };
    const manifest = JSON.parse(readFileSync(join(distDir, 'manifest.json'), 'utf8')) as {
      routes: { method: string; path: string; long?: unknown }[];
    };
    const long = manifest.routes.filter((m) => m.long).map((m) => `${m.method} ${m.path}`);
    expect(long.length).toBeGreaterThanOrEqual(17);
    for (const m of manifest.routes) {
      const op = doc.paths[m.path.replace(/:(\w+)/g, '{$1}')][m.method.toLowerCase()];
      const isLong = long.includes(`${m.method} ${m.path}`);
      expect([
        m.path,
        '202' in op.responses,
        op.parameters.some((p) => p.name === 'Prefer'),
        'x-long-operation' in op,
      ]).toEqual([m.path, isLong, isLong, isLong]);
    }
  });
});

describe('long routes run as jobs (live commands)', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ backend: liveBackend(), routes: [slow, plainSlow, ...jobRoutes] });
  });
  afterAll(async () => t?.close());

  it('a synchronous request answers as always and leaves a succeeded job with that same answer and its log', async () => {
    const r = await t.call('POST', '/api/v2/fs/test_slow', { body: { seconds: 0.05 } });
    expect([r.status, r.json]).toEqual([200, { slept: 1 }]);
    const list = await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs?area=fs');
    const job = list.json.jobs[0];
    expect(job).toMatchObject({
      state: 'succeeded',
      status: 200,
      result: { slept: 1 },
      route: 'POST /api/v2/fs/test_slow',
      area: 'fs',
      error: null,
      undo: null,
      budgetS: 20,
    });
    expect(job.log).toEqual([`$ ${SLEEP} 0.05`, '  → sleep exit 0 ' + job.log[1].slice('  → sleep exit 0 '.length)]);
    expect(job.progress).toEqual({ phase: 'wait', step: 1, steps: 1, message: 'sleep 1', percent: 0 });
    const whole = await t.call('GET', `/api/v2/jobs/${job.id}/result`);
    expect(whole.text).toBe(r.text);
  });

  it('Prefer: respond-async answers 202 with the job; its event stream runs to the end in order', async () => {
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/test_slow', {
      body: { seconds: 0.1, steps: 3 },
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    expect(r.headers.get('preference-applied')).toBe('respond-async');
    expect(r.headers.get('location')).toBe(`/api/v2/jobs/${r.json.job.id}`);
    expect(r.json.job.state).toBe('running');
    const stream = await t.call('GET', `/api/v2/jobs/${r.json.job.id}/events`);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseEvents(stream.text);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ event: 'state', data: { state: 'running' } });
    expect(events.filter((e) => e.event === 'progress').map((e) => e.data.step)).toEqual([1, 2, 3]);
    expect(events.filter((e) => e.event === 'log' && String(e.data.line).startsWith('$ '))).toHaveLength(3);
    expect(events[events.length - 1]).toMatchObject({ event: 'state', data: { state: 'succeeded', status: 200 } });
    // resumed after event 4: exactly the rest
    const rest = sseEvents(
      (await t.call('GET', `/api/v2/jobs/${r.json.job.id}/events`, { headers: { 'last-event-id': '4' } })).text,
    );
    expect(rest.map((e) => e.id)).toEqual(events.slice(4).map((e) => e.id));
    const done = await t.call<{ job: Job }>('GET', `/api/v2/jobs/${r.json.job.id}`);
    expect(done.json.job.result).toEqual({ slept: 3 });
  });

  it('cancel stops the running command (its process gone), starts nothing more, and says so', async () => {
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/test_slow', {
      body: { seconds: 31.25, steps: 3 },
      headers: { prefer: 'respond-async' },
    });
    const id = r.json.job.id;
    await until(
      'the sleep to run',
      () => running(SLEEP, '31.25'),
      (n) => n === 1,
    );
    const c = await t.call<{ job: Job }>('POST', `/api/v2/jobs/${id}/cancel`, { body: {} });
    expect(c.status).toBe(200);
    expect(c.json.job.state).toBe('cancelled');
    expect(c.json.job.error).toMatchObject({ code: 'cancelled' });
    expect(running(SLEEP, '31.25')).toBe(0);
    // one command started, none after the cancel (the audit trail of the request)
    const rows = t.host.db
      .prepare("SELECT argv, note FROM audit_log WHERE request_id = ? AND kind = 'exec'")
      .all(r.json.job.requestId) as { argv: string; note: string | null }[];
    expect(rows).toEqual([{ argv: JSON.stringify([SLEEP, '31.25']), note: 'cancelled' }]);
    // a second cancel: the job is not running any more
    expect((await t.call('POST', `/api/v2/jobs/${id}/cancel`, { body: {} })).status).toBe(409);
  });

  it('another token sees, cancels and reads none of it; its own jobs with the area read permission; * all', async () => {
    const reader = await t.token(['fs:read'], 'reader');
    const other = await t.token(['fs:manage'], 'other');
    const mine = await t.call<{ job: Job }>('POST', '/api/v2/fs/test_slow', {
      token: other,
      body: { seconds: 0.01 },
    });
    expect(mine.status).toBe(200);
    const seen = (tok: string) =>
      t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs', { token: tok }).then((a) => a.json.jobs.map((j) => j.tokenId));
    const otherId = (await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs', { token: other })).json.jobs[0];
    expect(await seen(reader)).toEqual([]);
    expect(new Set(await seen(other))).toEqual(new Set([otherId.tokenId]));
    expect((await seen(t.adminToken)).length).toBeGreaterThan(1);
    expect((await t.call('GET', `/api/v2/jobs/${otherId.id}`, { token: reader })).status).toBe(404);
    expect((await t.call('GET', `/api/v2/jobs/${otherId.id}/events`, { token: reader })).status).toBe(404);
    expect((await t.call('GET', `/api/v2/jobs/${otherId.id}/result`, { token: reader })).status).toBe(404);
    expect((await t.call('GET', `/api/v2/jobs/${otherId.id}`, { token: other })).status).toBe(200);
    // mine=true: a * token's own only
    const own = await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs?mine=true');
    expect(own.json.jobs.every((j) => j.tokenId === own.json.jobs[0].tokenId)).toBe(true);
    expect(own.json.jobs.some((j) => j.id === otherId.id)).toBe(false);
    // a token without the route's permission gets the route's 403, and no job
    const before = (await seen(t.adminToken)).length;
    expect((await t.call('POST', '/api/v2/fs/test_slow', { token: reader, body: { seconds: 0.01 } })).status).toBe(403);
    expect((await seen(t.adminToken)).length).toBe(before);
  });

  it('pages newest first with a cursor', async () => {
    for (let i = 0; i < 3; i++) await t.call('POST', '/api/v2/fs/test_slow', { body: { seconds: 0.01 } });
    const p1 = await t.call<{ jobs: Job[]; next: string }>('GET', '/api/v2/jobs?limit=2');
    const p2 = await t.call<{ jobs: Job[]; next: string | null }>('GET', `/api/v2/jobs?limit=2&before=${p1.json.next}`);
    const all = await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs?limit=4');
    expect([...p1.json.jobs, ...p2.json.jobs].map((j) => j.id)).toEqual(all.json.jobs.map((j) => j.id));
    expect(p1.json.next).toBe(p1.json.jobs[1].id);
  });
});

describe('a cancelled or timed-out change is rolled back through the journal', () => {
  let t: TestHost;
  let file = '';
  let marker = '';
  afterAll(async () => t?.close());

  it('the file as it was, the undo run, the job says what was undone', async () => {
    const { config, root } = makeTestConfig();
    file = join(root, 'changed.conf');
    marker = join(root, 'undo-ran');
    writeFileSync(file, 'old\n');
    t = await makeTestHost({
      backend: liveBackend(),
      configure: (c) => {
        c.fileRoots = [root];
        c.stateDir = config.stateDir;
        c.paths = config.paths;
      },
      routes: [journaled(file, marker), ...jobRoutes],
    });
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/test_change', {
      body: { seconds: 32.5 },
      headers: { prefer: 'respond-async' },
    });
    await until(
      'the sleep',
      () => running(SLEEP, '32.5'),
      (n) => n === 1,
    );
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    const c = await t.call<{ job: Job }>('POST', `/api/v2/jobs/${r.json.job.id}/cancel`, { body: {} });
    expect(c.json.job).toMatchObject({
      state: 'cancelled',
      undo: { files: [file], undone: [[TOUCH, '--', marker]], failed: [] },
    });
    expect(readFileSync(file, 'utf8')).toBe('old\n');
    expect(readFileSync(marker, 'utf8')).toBe(''); // touched before the cancel; an undo touches nothing
    expect(t.host.db.prepare('SELECT * FROM intents').all()).toEqual([]);
  });

  it('a job past its budget (2 s) is stopped the same way and ends failed with a timeout', async () => {
    writeFileSync(file, 'old\n');
    const started = Date.now();
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/test_change', { body: { seconds: 33.5 } });
    const ms = Date.now() - started;
    // the synchronous client waited for the job's end: the budget, then the rollback
    expect(ms).toBeGreaterThanOrEqual(2000);
    expect(r.status).toBeGreaterThanOrEqual(400);
    const job = (await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs?limit=1')).json.jobs[0];
    expect(job).toMatchObject({ state: 'failed', error: { code: 'timeout' }, undo: { files: [file] } });
    expect(job.error?.message).toBe('stopped: its time budget of 2 s ran out');
    expect(readFileSync(file, 'utf8')).toBe('old\n');
    expect(running(SLEEP, '33.5')).toBe(0);
  });
});

describe('the request limit (real HTTP server, limits.requestTimeoutMs 600 ms)', () => {
  let s: Serving;
  let token = '';
  beforeAll(async () => {
    const { config } = makeTestConfig({});
    config.limits = { ...config.limits, requestTimeoutMs: 600 };
    s = await serve({
      config,
      distDir,
      backend: liveBackend(),
      routes: [slow, plainSlow, ...jobRoutes],
      log: () => undefined,
      signals: false,
      accessLog: false,
    });
    token = (await createToken(s.host.db, 'admin', ['*'])).token;
  });
  afterAll(async () => s?.stop());

  const post = (path: string, body: unknown) =>
    fetch(`${s.server.url}/api/v2${path}`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('a long route: 504 naming the job, which goes on and succeeds', async () => {
    const r = await post('/fs/test_slow', { seconds: 0.5, steps: 3 });
    expect(r.status).toBe(504);
    const err = ((await r.json()) as { error: { code: string; details: { job: string } } }).error;
    expect(err.code).toBe('timeout');
    expect(err.details.job).toMatch(/^\/api\/v2\/jobs\/[0-9a-f-]{36}$/);
    const job = await until(
      'the job to end',
      async () =>
        ((await (await fetch(`${s.server.url}${err.details.job}`, { headers: { token } })).json()) as { job: Job }).job,
      (j) => j.state !== 'running',
    );
    expect(job).toMatchObject({ state: 'succeeded', result: { slept: 3 } });
  });

  it('a client that goes away does not stop the job', async () => {
    const gone = new AbortController();
    const req = fetch(`${s.server.url}/api/v2/fs/test_slow`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json', 'x-request-id': 'client-gone-0001' },
      body: JSON.stringify({ seconds: 0.3, steps: 2 }),
      signal: gone.signal,
    }).catch((e: unknown) => e);
    const jobOf = () => s.host.jobs.registry.list({ limit: 20 }).find((j) => j.requestId === 'client-gone-0001');
    await until('the job to start', jobOf, (j) => j !== undefined);
    gone.abort();
    expect(await req).toBeInstanceOf(Error);
    const job = await until('the job to end', jobOf, (j) => j?.state !== 'running');
    expect(job).toMatchObject({ state: 'succeeded', result: { slept: 2 } });
  });

  it('the typed client waits for a job over its event stream, with its progress', async () => {
    const client = createBallastClient({ baseUrl: s.server.url, token });
    const accepted = await fetch(`${s.server.url}/api/v2/fs/test_slow`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ seconds: 0.05, steps: 3 }),
    });
    const id = ((await accepted.json()) as { job: Job }).job.id;
    const seen: unknown[] = [];
    const job = await client.waitForJob(id, { onProgress: (p) => seen.push(p.step) });
    expect(job).toMatchObject({ id, state: 'succeeded', result: { slept: 3 } });
    expect(seen).toEqual([1, 2, 3]);
    await expect(client.waitForJob('00000000-0000-4000-8000-000000000000')).rejects.toThrow(/answered 404/);
  });

  it('any other route: 504, its command stopped, and no command after it', async () => {
    const r = await post('/fs/test_plain_slow', { seconds: 34.5, steps: 2 });
    expect(r.status).toBe(504);
    const requestId = r.headers.get('x-request-id') as string;
    await until(
      'the sleep to be stopped',
      () => running(SLEEP, '34.5'),
      (n) => n === 0,
    );
    // the handler saw its command end and tried the next: refused, never started
    await until(
      'the request to end',
      () => s.host.system.isCancelled(requestId),
      (c) => !c,
    );
    // the stopped command's audit row comes with the writer's next batch (db/audit.ts); a
    // second command would add a row, so the list is read until it has one, then once more
    const execRows = () =>
      s.host.db.prepare("SELECT argv FROM audit_log WHERE request_id = ? AND kind = 'exec'").all(requestId) as {
        argv: string;
      }[];
    await until('the stopped command audited', execRows, (rows) => rows.length > 0);
    await s.host.system.auditWritten();
    expect(execRows()).toEqual([{ argv: JSON.stringify([SLEEP, '34.5']) }]);
  });
});
