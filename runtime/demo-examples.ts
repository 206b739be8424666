import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoConfig, seedDemo } from './demo';
import { createHost, readManifest, type ManifestEntry } from './host';
import { createToken } from './tokens';
import type { ExampleRequest, RouteExample } from '../handlers/core/route';
import type { Host } from './host';

export interface ExampleRun {
  route: ManifestEntry & { operationId?: string; examples?: RouteExample[] };
  index: number;
  example: RouteExample;
  /** What the example declares (default 200). */
  expected: number;
  status: number;
  contentType: string;
  /** The answer: parsed JSON when it is JSON, else the text. */
  body: unknown;
  /** The example's `before` requests, in order. */
  before: StepRun[];
  /** Its `then` reads: run before the example (`shownBefore`) and after it. */
  then: (StepRun<ExampleRead> & { shownBefore: boolean; shown: boolean })[];
}

type ExampleRead = NonNullable<RouteExample['then']>[number];

export interface StepRun<R extends ExampleRequest = ExampleRequest> {
  request: R;
  expected: number;
  status: number;
  body: unknown;
}

/**
 * Whether `actual` contains `pattern`: a primitive equals it; an object has each of the pattern's
 * keys with a matching value (other keys are free); an array has, for each pattern element, some
 * element matching it. A text answer (a string at the top) contains a string pattern.
 */
export function shows(actual: unknown, pattern: unknown, top = true): boolean {
  if (top && typeof actual === 'string' && typeof pattern === 'string') return actual.includes(pattern);
  if (Array.isArray(pattern))
    return Array.isArray(actual) && pattern.every((p) => actual.some((a: unknown) => shows(a, p, false)));
  if (pattern !== null && typeof pattern === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    return Object.entries(pattern).every(([k, v]) => k in a && shows(a[k], v, false));
  }
  return Object.is(actual, pattern);
}

async function call(host: Host, token: string, method: string, url: string, body: unknown) {
  const init: RequestInit = { method, headers: { token, 'content-type': 'application/json' } };
  if (method !== 'GET') init.body = JSON.stringify(body ?? {});
  const res = await host.app.fetch(new Request(url, init), host.env);
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (contentType.includes('json') || contentType.startsWith('application/string')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, contentType, body: parsed };
}

/**
 * An answer as the documentation shows it: each example runs on a demo in a temp directory, so
 * paths in its answer (ingest's `resolutions`, …) name that directory; they are put back as the
 * demo's documents name them: a file under the demo root as on the box (`/etc/ballast/tls/
 * server.key`), the rest of the demo's state under `var/demo` (as `npm start` keeps it).
 */
export function documentedPaths(value: unknown, stateDir: string): unknown {
  const root = join(stateDir, 'root');
  const map = (s: string): string =>
    s
      .replace(new RegExp(`${escapeRegExp(root)}(?=/|\\b|$)`, 'g'), (_, i: number, all: string) =>
        all[i + root.length] === '/' ? '' : '/',
      )
      .split(stateDir)
      .join('var/demo');
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((v) => documentedPaths(v, stateDir));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, documentedPaths(v, stateDir)]));
  return value;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const stepUrl = (r: ExampleRequest) => `http://demo.local/api/v2${r.path}`;

/** `/api/v2/x/:name/y` with the example's params filled in (URL-encoded) and its query appended. */
export function examplePath(path: string, e: RouteExample): string {
  const p = path.replace(/:(\w+)/g, (_, k: string) => {
    const v = e.params?.[k];
    if (v === undefined) throw new Error(`example "${e.summary}" of ${path} gives no value for :${k}`);
    return encodeURIComponent(v);
  });
  const q = new URLSearchParams(e.query ?? {}).toString();
  return `${p}${q ? `?${q}` : ''}`;
}

export const exampleUrl = (path: string, e: RouteExample): string => `http://demo.local${examplePath(path, e)}`;

/**
 * Runs every example of every route of the manifest, each on a FRESH demo appliance (demoConfig +
 * seedDemo in a private directory, the built route bundles), as an admin token: what a user of
 * `npm start` meets when they try that example first (after its `before` requests). Its `then`
 * reads run on the same demo just before and just after it.
 */
export async function runDemoExamples(
  repo: string,
  distDir: string,
  only?: (r: ManifestEntry) => boolean,
): Promise<ExampleRun[]> {
  const runs: ExampleRun[] = [];
  const manifest = readManifest(distDir) as ExampleRun['route'][];
  for (const route of manifest) {
    if (only && !only(route)) continue;
    for (const [index, example] of (route.examples ?? []).entries()) {
      const state = mkdtempSync(join(tmpdir(), 'ballast-demo-example-'));
      const config = demoConfig(repo, 0, state);
      seedDemo(repo, config);
      const host = await createHost({ config, distDir, log: () => undefined }).catch((e: unknown) => {
        rmSync(state, { recursive: true, force: true });
        throw e;
      });
      try {
        const { token } = await createToken(host.db, 'admin', ['*']);
        const step = async <R extends ExampleRequest>(request: R): Promise<StepRun<R>> => {
          const r = await call(host, token, request.method, stepUrl(request), request.body);
          return { request, expected: request.status ?? 200, status: r.status, body: r.body };
        };
        const before: StepRun[] = [];
        for (const b of example.before ?? []) before.push(await step(b));
        const reads = example.then ?? [];
        const shownBefore: boolean[] = [];
        for (const t of reads) shownBefore.push(shows((await step(t)).body, t.shows));
        const r = await call(host, token, route.method, exampleUrl(route.path, example), example.body);
        const then: ExampleRun['then'] = [];
        for (const [i, t] of reads.entries()) {
          const s = await step(t);
          then.push({ ...s, shownBefore: shownBefore[i], shown: shows(s.body, t.shows) });
        }
        runs.push({
          route,
          index,
          example,
          expected: example.status ?? 200,
          status: r.status,
          contentType: r.contentType,
          body: documentedPaths(r.body, state),
          before,
          then,
        });
      } finally {
        await host.close();
        rmSync(state, { recursive: true, force: true });
      }
    }
  }
  return runs;
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** The time every example answer shows: 2026-01-01T00:00:00Z. */
export const EXAMPLE_EPOCH_MS = Date.UTC(2026, 0, 1);

/**
 * An example answer as the document shows it: what differs from one run to the next (times,
 * inode and device numbers, block sizes of the build machine's file system) is set to fixed
 * values, so two builds of one commit write the same document. Inode numbers count from 1000 in
 * the answer's order, so entries stay distinct.
 */
const RANDOM_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;
const EXAMPLE_UUID = '00000000-0000-4000-8000-000000000000';
const TOKEN = /blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g;
const EXAMPLE_TOKEN_ID = '0123456789ab';

/**
 * A string an example run made up: a minted token and its id, a job's or request's random id, a
 * command's duration in a log line, the numbers of a Prometheus exposition. A filesystem's UUID
 * (a fixture's, under a `uuid` key) stays as recorded.
 */
function stableText(v: string, key: string): string {
  if (/uuid/i.test(key)) return v;
  if ((key === 'id' || key === 'tokenId') && /^[0-9a-f]{12}$/.test(v)) return EXAMPLE_TOKEN_ID;
  let out = v
    .replace(TOKEN, `blt_${EXAMPLE_TOKEN_ID}_${'x'.repeat(43)}`)
    .replace(RANDOM_UUID, EXAMPLE_UUID)
    .replace(/\(\d+ ms\)/g, '(0 ms)');
  // a metrics exposition: every value 0, and no sample of the Node process's own handles and
  // resources (which of them exist at that moment is the build machine's)
  if (out.startsWith('# HELP '))
    out = out
      .replace(/^ballast_(nodejs|process)_[a-z0-9_]*\{[^}]*\} \S+\n/gm, '')
      .replace(/^([a-z_:][a-z0-9_:]*(\{[^}]*\})?) \S+$/gm, '$1 0');
  return out;
}

export function stableExampleValue(value: unknown): unknown {
  let ino = 1000;
  const walk = (v: unknown, key: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    // the same precision as the answer had (a schema may refuse fractions where there were none)
    const iso = typeof v === 'string' ? ISO_TIME.exec(v) : null;
    if (iso)
      return `${new Date(EXAMPLE_EPOCH_MS).toISOString().slice(0, 19)}${iso[1] ? `.${'0'.repeat(iso[1].length - 1)}` : ''}Z`;
    // a Unix time as digits (`unix_time: "1795729918050"`): the epoch in the same unit
    if (typeof v === 'string' && /time/i.test(key) && /^\d{10}(\d{3})?$/.test(v))
      return String(v.length === 13 ? EXAMPLE_EPOCH_MS : EXAMPLE_EPOCH_MS / 1000);
    if (typeof v === 'string') return stableText(v, key);
    if (typeof v !== 'number') return v;
    if (key === 'ino') return ino++;
    // what a request's own run decides: how long it took, how long the host has been up
    if (key === 'durationMs' || key === 'ms') return 0;
    if (key === 'uptimeS') return 0;
    if (key === 'dev') return 2049;
    if (key === 'blksize') return 4096;
    if (/[a-z]Ms$/.test(key) && v > 1e12) return EXAMPLE_EPOCH_MS;
    return v;
  };
  return walk(value, '');
}
