/**
 * The edge tier: the same requests against three fresh demo appliances, the route bundle running
 * in-process (node), in workerd and in Deno (isolates reaching SYSTEM/DB/EVENTS over the binding
 * socket). Every answer of an isolate must equal the Node host's: status, body byte for byte,
 * and every header (value byte for byte) apart from the request id and the date. Each runtime
 * starts once for the whole file; the requests run in the same order on each, so changes leave
 * the three appliances in the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { exampleUrl } from '../../runtime/demo-examples';
import type { RouteExample } from '../../handlers/core/route';
import { RUNTIMES, distDir, request, startRuntime, type RawAnswer, type RunningRuntime } from './runtimes';

interface ManifestRoute {
  method: string;
  path: string;
  area: string;
  bundle: string;
  operationId: string;
  examples?: RouteExample[];
}
const manifest = (JSON.parse(readFileSync(join(distDir, 'manifest.json'), 'utf8')) as { routes: ManifestRoute[] })
  .routes;

const running = new Map<string, RunningRuntime>();
beforeAll(async () => {
  // one after the other: three cold starts at once on a 2-core box only measure the box
  for (const name of RUNTIMES) running.set(name, await startRuntime(name));
}, 120_000);
afterAll(async () => {
  for (const r of running.values()) await r.stop();
});

type Who = 'admin' | 'reader' | 'nobody' | 'forged';
let seq = 0;
/** The same request on each runtime; the Node host's answer first. */
async function onEach(method: string, path: string, who: Who, body?: string) {
  const id = `edge-${String(++seq).padStart(4, '0')}`;
  const answers: Record<string, RawAnswer> = {};
  for (const [name, r] of running) {
    // as browsers and fetch() send it: the isolates must still answer uncompressed, as the host does
    const headers: Record<string, string> = { 'x-request-id': id, 'accept-encoding': 'gzip, deflate, br' };
    if (who === 'admin') headers.token = r.admin;
    if (who === 'reader') headers.token = r.reader;
    if (who === 'forged') headers.token = 'blt_000000000000_notatoken';
    if (body !== undefined) headers['content-type'] = 'application/json';
    answers[name] = await request(r.url, method, path, headers, body);
  }
  return answers;
}

/**
 * What legitimately differs between two appliances in a body: times, generated ids, their demo
 * roots, and (a job's) durations and the token that asked.
 */
const stable = (body: string) =>
  body
    .replace(/ballast-edge-[a-z_]{7}-[A-Za-z0-9]{6}/g, '<demo state>')
    .replace(/blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g, '<minted token>')
    .replace(/"tokenId":"[0-9a-f]{12}"/g, '"tokenId":"<token>"')
    .replace(/"(id|by)":"[0-9a-f]{12}"/g, '"$1":"<token>"')
    // health: an isolated appliance reports its isolate; each has its own uptime
    .replace(/"isolate":(null|"alive")/g, '"isolate":"<isolate>"')
    .replace(/"uptimeS":\d+/g, '"uptimeS":<s>')
    // metrics: each appliance's own counts and times, as Prometheus text; which labelled samples of
    // the Node process exist (GC kinds seen so far, open handles) is each process's moment
    .replace(/^ballast_(nodejs|process)_[a-z0-9_]*\{[^}\n]*\} \S+\n/gm, '')
    .replace(/^([a-z_:][a-zA-Z0-9_:]*(\{[^}\n]*\})?) \S+$/gm, '$1 <value>')
    .replace(/"durationMs":\d+/g, '"durationMs":<ms>')
    .replace(/\(\d+ ms\)/g, '(<n> ms)')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<date>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/"unix_time":"?\d{13}"?/g, '"unix_time":<ms>');

/** What an example needs first (a create before a details or a destroy), on every appliance alike. */
async function runBefore(e: RouteExample): Promise<void> {
  for (const b of e.before ?? []) {
    const path = `/api/v2${b.path}`;
    const node = expectSame(
      await onEach(b.method, path, 'admin', b.body === undefined ? undefined : JSON.stringify(b.body)),
    );
    expect([b.method, path, node.status], node.body).toEqual([b.method, path, b.status ?? 200]);
  }
}

function expectSame(answers: Record<string, RawAnswer>) {
  const { node, ...isolates } = answers;
  // the length follows from the body, which is compared as normalised
  const norm = (a: RawAnswer) => ({
    ...a,
    body: stable(a.body),
    headers: a.headers.filter((h) => !h.startsWith('content-length:')),
  });
  for (const [name, a] of Object.entries(isolates))
    expect({ runtime: name, ...norm(a) }).toEqual({ runtime: name, ...norm(node) });
  return node;
}

const examplePath = (route: ManifestRoute, e: RouteExample) => {
  const u = new URL(exampleUrl(route.path, e));
  return u.pathname + u.search;
};

describe('edge tier: node, workerd and deno answer identically', () => {
  it('every built route bundle and the Deno entry are plain ESM with no node: import', () => {
    for (const m of manifest) {
      const code = readFileSync(join(distDir, m.bundle), 'utf8');
      expect(code).not.toMatch(/from\s*["']node:|import\(["']node:|require\(/);
    }
    const chunks = existsSync(join(distDir, 'routes/chunks')) ? readdirSync(join(distDir, 'routes/chunks')) : [];
    for (const f of chunks.filter((f) => f.endsWith('.mjs')))
      expect(readFileSync(join(distDir, 'routes/chunks', f), 'utf8')).not.toMatch(/from\s*["']node:/);
    expect(readFileSync(join(distDir, 'deno.mjs'), 'utf8')).not.toMatch(/["']node:|require\(/);
  });

  it('the isolates run in their own processes, the Node host in-process', () => {
    expect(running.get('node')?.serving.isolate).toBeUndefined();
    const pids = (['workerd', 'deno'] as const).map((n) => running.get(n)?.serving.isolate);
    expect(pids.map((i) => i?.runtime)).toEqual(['workerd', 'deno']);
    for (const i of pids) expect([i?.pid !== undefined, i?.pid !== process.pid]).toEqual([true, true]);
  });

  // Every GET route of the demo, every example, as the admin: the status the example declares.
  for (const route of manifest.filter((r) => r.method === 'GET')) {
    for (const [i, e] of (route.examples ?? []).entries()) {
      it(`GET ${route.path} example ${i + 1} (${e.summary})`, async () => {
        await runBefore(e);
        const node = expectSame(await onEach('GET', examplePath(route, e), 'admin'));
        expect(node.status, node.body).toBe(e.status ?? 200);
      });
    }
  }

  const authCases: [string, string, Who, number, string?][] = [
    ['GET', '/api/v2/kerberos/conf', 'nobody', 401],
    ['GET', '/api/v2/kerberos/conf', 'forged', 401],
    ['POST', '/api/v2/kerberos/realm/create', 'reader', 403, '{"name":"x","kdc":["k"]}'],
    ['POST', '/api/v2/notification/agent/create', 'nobody', 401, '{}'],
    ['HEAD', '/api/v2/kerberos/conf', 'admin', 200],
    ['OPTIONS', '/api/v2/kerberos/conf', 'nobody', 204],
    ['GET', '/api/v2/does/not/exist', 'admin', 404],
  ];
  for (const [method, path, who, status, body] of authCases) {
    it(`${method} ${path} as ${who}: ${status}`, async () => {
      const node = expectSame(await onEach(method, path, who, body));
      expect(node.status, node.body).toBe(status);
    });
  }

  const validationCases: [string, string, string][] = [
    ['POST', '/api/v2/kerberos/realm/create', '{}'],
    ['POST', '/api/v2/kerberos/key/list', '{"path":"relative.keytab"}'],
    ['POST', '/api/v2/notification/agent/create', '{"type":"carrier-pigeon"}'],
    ['POST', '/api/v2/fs/make_directory', '{"path":"../etc","unknown":1}'],
    ['POST', '/api/v2/s3/create', 'not json'],
    ['GET', '/api/v2/kerberos/realm/..%2Fkrb5/details', ''],
    // strict query keys are checked in the route, so each runtime's bundle refuses them alike
    ['GET', '/api/v2/s3/list?nosuchkey=1', ''],
    ['GET', '/api/v2/system/keys/auth?user=alice&verbose=1', ''],
  ];
  for (const [method, path, body] of validationCases) {
    it(`${method} ${path} with ${body || 'a bad parameter'}: 400`, async () => {
      const node = expectSame(await onEach(method, path, 'admin', method === 'GET' ? undefined : body));
      expect(node.status, node.body).toBe(400);
    });
  }

  // One change per area: a route whose first example succeeds on a fresh demo, preferring one
  // whose example names a read that shows the change (`then`): explore is a POST but reads files
  // whose inodes and times differ between the three demo roots.
  const areas = [...new Set(manifest.map((r) => r.area))].sort();
  for (const area of areas) {
    const candidates = manifest.filter(
      (r) =>
        r.area === area &&
        r.method !== 'GET' &&
        r.examples?.[0] !== undefined &&
        (r.examples[0].status ?? 200) < 300 &&
        !r.path.includes(':version') &&
        // its example confirms change 1 of a fresh demo; these appliances made changes before
        r.path !== '/api/v2/network/confirm',
    );
    const route = candidates.find((r) => r.examples?.[0]?.then !== undefined) ?? candidates[0];
    if (!route) continue;
    const e = (route.examples ?? [])[0];
    it(`a change in ${area}: ${route.method} ${route.path} (${e.summary})`, async () => {
      // a network change an earlier example left waiting for its confirmation holds every other
      // one (409): each appliance rolls it back first, alike
      await onEach('POST', '/api/v2/network/rollback', 'admin', '{}');
      await runBefore(e);
      const node = expectSame(await onEach(route.method, examplePath(route, e), 'admin', JSON.stringify(e.body ?? {})));
      expect(node.status, node.body).toBe(e.status ?? 200);
    });
  }

  it("a job's event stream (an answer in pieces) comes whole and alike from each runtime", async () => {
    // the changes above left jobs; the newest one's events, each runtime its own ids
    const streams: Record<string, { status: number; type: string | undefined; events: string[] }> = {};
    for (const [name, r] of running) {
      const headers = { token: r.admin };
      const list = await request(r.url, 'GET', '/api/v2/jobs', headers);
      const job = (JSON.parse(list.body) as { jobs: { id: string; state: string }[] }).jobs[0];
      expect(job.state, name).toBe('succeeded');
      const s = await request(r.url, 'GET', `/api/v2/jobs/${job.id}/events`, headers);
      streams[name] = {
        status: s.status,
        type: s.headers.find((h) => h.startsWith('content-type:')),
        // each event's kind and id, as `event id`
        events: s.body
          .split('\n\n')
          .filter(Boolean)
          .map((e) => `${/^event: (.*)$/m.exec(e)?.[1]} ${/^id: (.*)$/m.exec(e)?.[1]}`),
      };
    }
    const node = streams.node;
    expect([node.status, node.type]).toEqual([200, 'content-type: text/event-stream; charset=utf-8']);
    expect(node.events.at(-1)).toMatch(/^state \d+$/);
    expect(node.events.length).toBeGreaterThan(1);
    for (const name of RUNTIMES) expect({ name, ...streams[name] }).toEqual({ name, ...node });
  });

  it('the changes were recorded as the same events on each appliance', async () => {
    const node = expectSame(await onEach('GET', '/api/v2/notification/events?limit=100', 'admin'));
    expect(node.status).toBe(200);
  });

  it('no isolate died', () => {
    for (const r of running.values()) expect(r.deaths).toEqual([]);
  });
});
