/**
 * The demo appliance answers every documented example: for every route of the manifest, each of
 * its `examples` runs on a FRESH demo host (runtime/demo.ts, private directory) and answers its
 * declared status (default 200); a 2xx answer parses with the route's response schema. A route
 * without examples fails. An example's `before` requests run first on the same demo and answer
 * their status; its `then` reads run on the same demo before it (they must not show the change
 * yet) and after it (200, and they show it): configure → list shows the new address. Requests
 * outside the examples: an unrecorded command answers 501 `not_recorded`, an unknown name 404.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteExample, RouteModule } from '../../handlers/core/route';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { runDemoExamples, shows, type ExampleRun } from '../../runtime/demo-examples';
import { loadFixtureDir, type Fixture } from '../../runtime/system/fixture-file';
import { ReplayBackend } from '../../runtime/system/replay';
import { createHost, readManifest, type Host } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');

execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });
/** The areas with a change example whose `then` read shows it (README: Demo sequences). */
const SEQUENCE_AREAS = [
  'certificate',
  'dfs',
  'fs',
  'kerberos',
  'keys',
  'network',
  'notification',
  'pod',
  's3',
  'tokens',
  'traffic',
];

const manifest = readManifest(dist) as (ReturnType<typeof readManifest>[number] & { examples?: unknown[] })[];

describe('every route has examples', () => {
  it.each(manifest.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_, r) => {
    expect(r.examples?.length ?? 0, `${r.method} ${r.path} declares no examples`).toBeGreaterThan(0);
  });
});

describe('every example answers as declared on a fresh demo', () => {
  let runs: ExampleRun[] = [];
  beforeAll(async () => {
    runs = await runDemoExamples(repo, dist);
  }, 600_000);

  const withExamples = manifest.filter((r) => r.examples?.length);
  it.each(withExamples.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (_, r) => {
    const mine = runs.filter((x) => x.route.method === r.method && x.route.path === r.path);
    expect(mine.length).toBe(r.examples?.length);
    const mod = ((await import(pathToFileURL(join(dist, r.bundle)).href)) as { default: RouteModule }).default;
    for (const x of mine) {
      const what = `${r.method} ${r.path} example ${x.index + 1} "${x.example.summary}": ${JSON.stringify(x.body).slice(0, 400)}`;
      expect(x.status, what).toBe(x.expected);
      if (x.status >= 200 && x.status < 300 && x.status !== 204) {
        const parsed = mod.schemas.response.safeParse(x.body);
        expect(
          parsed.success,
          `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues).slice(0, 400)}`,
        ).toBe(true);
      }
      expect(x.status, what).not.toBe(500);
      for (const b of x.before)
        expect(
          b.status,
          `${what}: before: ${b.request.method} ${b.request.path}: ${JSON.stringify(b.body).slice(0, 400)}`,
        ).toBe(b.expected);
      for (const t of x.then) {
        const read = `${what}: then ${t.request.method} ${t.request.path}`;
        expect(t.shownBefore, `${read} shows ${JSON.stringify(t.request.shows)} already before the change`).toBe(false);
        expect(t.status, `${read}: ${JSON.stringify(t.body).slice(0, 400)}`).toBe(t.expected);
        expect(t.shown, `${read} does not show ${JSON.stringify(t.request.shows)}: ${JSON.stringify(t.body)}`).toBe(
          true,
        );
      }
    }
  });
});

describe('demo sequences', () => {
  const fixtures = loadFixtureDir(join(repo, 'fixtures/demo'));
  it('every fixture `after` names a demo fixture', () => {
    const names = new Set(fixtures.map((f) => f.name));
    const afters = fixtures.filter((f) => f.after !== undefined);
    expect(afters.length).toBeGreaterThan(0);
    for (const f of afters)
      for (const a of ([] as string[]).concat(f.after ?? [])) expect(names.has(a), `${f.name}: after ${a}`).toBe(true);
  });

  it('these changes are shown by a later read (at least one per area that has such a read)', () => {
    const areas = new Set(
      manifest
        .filter((r) => (r.examples as RouteExample[] | undefined)?.some((e) => e.then?.length))
        .map((r) => r.bundle.split('/')[1]),
    );
    expect([...areas].sort()).toEqual(SEQUENCE_AREAS);
  });

  it('shows: objects by listed keys, arrays by some matching element', () => {
    expect(shows({ a: [{ b: 1, c: 2 }, { b: 3 }], d: 'x' }, { a: [{ b: 3 }] })).toBe(true);
    expect(shows({ a: [{ b: 1 }] }, { a: [{ b: 3 }] })).toBe(false);
    expect(shows({ a: 1 }, { b: undefined })).toBe(false);
    expect(shows([1, 2], [2, 1])).toBe(true);
    expect(shows('1', 1)).toBe(false);
    expect(shows('a\nuser:x:rwx\nb', 'user:x:rwx\n')).toBe(true);
    expect(shows({ s: 'update' }, { s: 'up' })).toBe(false);
  });

  it('replay: an `after` fixture answers once its change answered; the latest change wins', async () => {
    const f = (name: string, argv: string[], stdout: string, extra: Partial<Fixture> = {}): Fixture => ({
      source: 'test',
      name,
      argv,
      code: 0,
      stdout,
      stderr: '',
      ...extra,
    });
    const r = new ReplayBackend([
      f('list', ['/bin/list'], 'base'),
      f('list-added', ['/bin/list'], 'with x', { after: 'add' }),
      f('list-removed', ['/bin/list'], 'without x', { after: 'remove' }),
      f('add', ['/bin/add', 'x'], ''),
      f('remove', ['/bin/remove', 'x'], '', { once: true }),
    ]);
    const out = async (argv: string[]) => (await r.exec(argv, {})).stdout;
    expect(await out(['/bin/list'])).toBe('base');
    await out(['/bin/add', 'x']);
    expect(await out(['/bin/list'])).toBe('with x');
    expect(await out(['/bin/list'])).toBe('with x');
    await out(['/bin/remove', 'x']);
    expect(await out(['/bin/list'])).toBe('without x');
    await out(['/bin/add', 'x']);
    expect(await out(['/bin/list'])).toBe('with x');
    await expect(out(['/bin/remove', 'x'])).rejects.toThrow(/no recorded fixture/);
  });

  it('replay: an `after` list needs every change; on a tie the fixture naming more changes wins', async () => {
    const f = (name: string, argv: string[], stdout: string, after?: string | string[]): Fixture => ({
      source: 'test',
      name,
      argv,
      code: 0,
      stdout,
      stderr: '',
      after,
    });
    const make = () =>
      new ReplayBackend([
        f('show', ['/bin/show'], 'up, with address'),
        f('show-down', ['/bin/show'], 'down, with address', 'down'),
        f('show-unconfigured', ['/bin/show'], 'down, no address', ['flush', 'down']),
        f('flush', ['/bin/flush'], ''),
        f('down', ['/bin/down'], ''),
      ]);
    // update: down alone keeps the address; a later flush takes it
    let r = make();
    const out = async (argv: string[]) => (await r.exec(argv, {})).stdout;
    expect(await out(['/bin/show'])).toBe('up, with address');
    await out(['/bin/down']);
    expect(await out(['/bin/show'])).toBe('down, with address');
    await out(['/bin/flush']);
    expect(await out(['/bin/show'])).toBe('down, no address');
    // unconfigure: flush then down; both fixtures are ready at the same change, the one naming two wins
    r = make();
    await out(['/bin/flush']);
    expect(await out(['/bin/show'])).toBe('up, with address');
    await out(['/bin/down']);
    expect(await out(['/bin/show'])).toBe('down, no address');
  });
});

describe('requests outside the examples', () => {
  let host: Host;
  let state: string;
  let token: string;
  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), 'ballast-demo-outside-'));
    const config = demoConfig(repo, 0, state);
    seedDemo(repo, config);
    host = await createHost({ config, distDir: dist, log: () => undefined });
    token = (await createToken(host.db, 'admin', ['*'])).token;
  });
  afterAll(async () => {
    await host?.close();
    rmSync(state, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await host.app.fetch(
      new Request(`http://demo.local/api/v2${path}`, {
        method,
        headers: { token, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      host.env,
    );
    return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
  };

  it('an unknown interface is 404, not a replay failure', async () => {
    const r = await call('GET', '/network/interface/nosuchdev0/details');
    expect([r.status, r.json.error?.code]).toEqual([404, 'not_found']);
  });

  it('a change needing an unrecorded command answers 501 not_recorded naming the argv', async () => {
    const r = await call('POST', '/fs/make_directory', { destination: '/srv/data/not-in-any-example-dir' });
    expect([r.status, r.json.error?.code]).toEqual([501, 'not_recorded']);
    expect(r.json.error?.message).toContain('not-in-any-example-dir');
  });
});
