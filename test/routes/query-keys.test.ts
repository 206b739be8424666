/**
 * Query strings are strict, like bodies (issue 31 item 6): a key a route does not take is a 400
 * `validation_failed` naming `query.<key>`, on every GET route, whether it declares a query
 * schema or not; a GET's JSON body (the Node host maps its fields onto the query) is held to the
 * same keys.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { route, type RouteModule } from '../../handlers/core/route';
import type { Call } from '../../handlers/core/pipeline';
import { allRouteModules, distDir, makeDemoHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';

const modules: RouteModule[] = [];
let demo: TestHost;

beforeAll(async () => {
  modules.push(...(await allRouteModules()));
  demo = await makeDemoHost({ routes: modules });
}, 60_000);
afterAll(async () => {
  await demo?.close();
});

const gets = () => modules.filter((m) => m.meta.method === 'GET');

/** The route's first example as a URL, with `extra` appended to its query. */
function exampleUrl(m: RouteModule, extra: Record<string, string>): string {
  const e = m.meta.examples?.[0];
  const path = m.meta.path.replace(/:([A-Za-z0-9_]+)/g, (_, k: string) =>
    encodeURIComponent(k === 'version' ? 'v2' : (e?.params?.[k] ?? 'x')),
  );
  const q = new URLSearchParams({ ...(e?.query ?? {}), ...extra }).toString();
  return `${path}?${q}`;
}

/** A GET with a JSON body, as the Node host hands it to the app (no WHATWG Request can carry one). */
async function getWithBody(path: string, bodyText: string) {
  const call: Call = {
    method: 'GET',
    url: new URL(`http://ballast.local${path}`),
    header: (name) => (name === 'token' ? demo.adminToken : null),
    bodyText,
    connection: {},
    requestId: 'query-keys-0001',
  };
  const reply = await demo.host.app.handle(call, demo.host.env);
  return { status: reply.status, json: JSON.parse((reply.body as string | null) ?? 'null') as unknown };
}

describe('unknown query keys', () => {
  it('the table covers every GET route of the manifest', () => {
    expect(gets().length).toBeGreaterThanOrEqual(39);
    const manifest = join(distDir, 'manifest.json');
    if (!existsSync(manifest)) return;
    const built = (JSON.parse(readFileSync(manifest, 'utf8')) as { routes: { method: string; path: string }[] }).routes
      .filter((r) => r.method === 'GET')
      .map((r) => r.path)
      .sort();
    expect(
      gets()
        .map((m) => m.meta.path)
        .sort(),
    ).toEqual(built);
  });

  it('every GET route: ?nosuchkey=1 is a 400 naming query.nosuchkey', async () => {
    const wrong: string[] = [];
    for (const m of gets()) {
      const url = exampleUrl(m, { nosuchkey: '1' });
      const r = await demo.call('GET', url);
      const e = r.status === 400 ? errorOf(r) : undefined;
      if (e?.code !== 'validation_failed' || e.issues?.[0]?.path !== 'query.nosuchkey')
        wrong.push(`${url}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the message says what the route takes', async () => {
    const none = errorOf(await demo.call('GET', '/api/v2/s3/list?x=1'));
    expect(none.issues).toEqual([{ path: 'query.x', message: 'unknown query parameter: this route takes none' }]);
    const some = errorOf(await demo.call('GET', '/api/v2/pod/web/log?lines=5&tail=5'));
    expect(some.issues).toEqual([
      { path: 'query.tail', message: 'unknown query parameter: this route takes lines, since' },
    ]);
  });

  it('known keys still work (the examples answer as before)', async () => {
    expect((await demo.call('GET', '/api/v2/s3/list')).status).toBe(200);
    expect((await demo.call('GET', '/api/v2/dfs/lnet/peer_list?verbose=true')).status).toBe(200);
    expect((await demo.call('GET', '/api/v2/notification/events?limit=5')).status).toBe(200);
  });

  it('a GET body: its fields are query keys (known ones work, unknown ones are refused)', async () => {
    const alice = await getWithBody('/api/v2/system/keys/auth', '{"user":"alice"}');
    expect(alice.status).toBe(200);
    expect((alice.json as unknown[]).length).toBe(3);
    const unknown = await getWithBody('/api/v2/system/keys/auth', '{"user":"alice","nosuchkey":1}');
    expect(unknown.status).toBe(400);
    expect(errorOf(unknown).issues?.[0]?.path).toBe('query.nosuchkey');
    const none = await getWithBody('/api/v2/s3/list', '{"x":true}');
    expect(errorOf(none).issues?.[0]?.path).toBe('query.x');
    // a field no query string can hold is refused, not dropped
    for (const v of ['null', '{"a":1}', '[1]']) {
      const r = await getWithBody('/api/v2/s3/list', `{"nested":${v}}`);
      expect([v, r.status, errorOf(r).issues?.[0]?.path]).toEqual([v, 400, 'body.nested']);
    }
    expect((await getWithBody('/api/v2/s3/list', '{}')).status).toBe(200);
  });

  it('a route whose query schema is not an object is refused when it is declared', () => {
    expect(() =>
      route({
        method: 'GET',
        path: '/test/q',
        permission: 'test:read',
        summary: 'q',
        query: z.record(z.string(), z.string()),
        response: z.object({}),
        handler: async () => ({}),
      }),
    ).toThrow(/query schema must be a z.object/);
  });
});
