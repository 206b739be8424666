/**
 * dist/openapi.json (build.mjs) is a valid OpenAPI 3.1 document: swagger-parser validates it,
 * `redocly lint` (recommended rules) finds 0 errors and only the warnings the README justifies,
 * every manifest route is in it with its file-derived operationId, and the app serves it without
 * a token, under the base path it is mounted at.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../../runtime/host';
import { makeDemoHost, type TestHost } from '../helpers/host';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');

interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { examples?: Record<string, { value?: unknown }> }> };
  parameters: { name: string; in: string; examples?: Record<string, { value?: unknown }> }[];
}
interface Doc {
  openapi: string;
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}
interface ManifestRoute {
  method: string;
  path: string;
  operationId: string;
  area: string;
  examples?: { body?: unknown; params?: Record<string, string>; query?: Record<string, string> }[];
}

const doc = () => JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as Doc;
const manifest = () =>
  (JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8')) as { routes: ManifestRoute[] }).routes;
const docPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');

/** The warnings the README lists and justifies (rule → how many). */
const ACCEPTED_WARNINGS: Record<string, number> = {
  // /pod/{name}/… beside /pod/suggested/{name}: the spec's paths; the app tries the path that has the method first
  'no-ambiguous-paths': 4,
  // POST /pod/config example 2 sends an unknown daemon.json key on purpose: its answer is the 400
  'no-invalid-media-type-examples': 1,
};

describe('dist/openapi.json', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });
  }, 120_000);

  it('validates with @apidevtools/swagger-parser (every $ref resolves)', async () => {
    const d = doc();
    expect(d.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(d) as never)).resolves.toBeTruthy();
    expect(JSON.stringify(d)).not.toContain('#/$defs/');
  });

  it('passes `redocly lint` with 0 errors and only the justified warnings', () => {
    const bin = join(repo, 'node_modules/.bin/redocly');
    let out: string;
    try {
      out = execFileSync(bin, ['lint', join(dist, 'openapi.json'), '--format=json'], {
        cwd: repo,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    const report = JSON.parse(out.slice(out.indexOf('{'))) as {
      problems: { ruleId: string; severity: string; message: string }[];
    };
    const errors = report.problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    const warnings: Record<string, number> = {};
    for (const p of report.problems.filter((x) => x.severity === 'warn'))
      warnings[p.ruleId] = (warnings[p.ruleId] ?? 0) + 1;
    expect(warnings).toEqual(ACCEPTED_WARNINGS);
  }, 120_000);

  it('has every manifest route, with a stable operationId, its tag, summary, description, errors and request examples', () => {
    const d = doc();
    const routes = manifest();
    expect(routes.length).toBeGreaterThan(90);
    const ids = new Set<string>();
    const tags = new Set(d.tags.map((t) => t.name));
    for (const r of routes) {
      const op = d.paths[docPath(r.path)]?.[r.method.toLowerCase()];
      expect(op?.operationId, `${r.method} ${r.path}`).toBe(r.operationId);
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(op.tags).toEqual([r.area]);
      expect(tags.has(r.area)).toBe(true);
      expect(op.summary.length).toBeGreaterThan(0);
      expect(op.description).toContain(op.summary.replace(/…$/, ''));
      for (const s of ['400', '401', '403', '404', '500']) expect(Object.keys(op.responses)).toContain(s);
      expect(Object.keys(op.responses).filter((s) => s === '200' || s === '204')).toHaveLength(1);
      for (const [i, e] of (r.examples ?? []).entries()) {
        const key = `example${i + 1}`;
        // a route that takes no body (`{}` only) documents no requestBody
        if (e.body !== undefined && op.requestBody)
          expect(op.requestBody?.content['application/json'].examples?.[key]?.value, `${r.operationId} ${key}`).toEqual(
            e.body,
          );
        for (const [name, v] of Object.entries(e.params ?? {}))
          expect(
            op.parameters.find((p) => p.name === name)?.examples?.[key]?.value,
            `${r.operationId} ${name}`,
          ).toEqual(v);
      }
    }
    expect(routes.find((r) => r.path === '/api/v2/kerberos/conf' && r.method === 'GET')?.operationId).toBe(
      'kerberos_confGet',
    );
    for (const t of d.tags) expect(t.description.length).toBeGreaterThan(20);
    expect(d.components.securitySchemes.token).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'token' }),
    );
  });
});

describe('GET /openapi.json', () => {
  let d: TestHost;
  let host: Host;
  beforeAll(async () => {
    d = await makeDemoHost();
    host = d.host;
  });
  afterAll(async () => {
    await d?.close();
  });

  it('is served by the host without a token', async () => {
    const res = await host.app.fetch(new Request('http://demo.local/api/v2/openapi.json'), host.env);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const served = (await res.json()) as Doc;
    expect(Object.keys(served.paths)).toEqual(Object.keys(doc().paths));
    expect(served.tags).toEqual(doc().tags);
  });

  it('is one document everywhere: the host serves the file, the embedded app the same, every response example in it', async () => {
    const file = JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as Doc;
    const app = (await import(pathToFileURL(join(dist, 'app.mjs')).href)) as {
      default: { fetch(r: Request, env: unknown): Promise<Response> };
      openapiDocument(): Doc;
    };
    const fromHost = await (await host.app.fetch(new Request('http://x/api/v2/openapi.json'), host.env)).json();
    const fromApp = await (await app.default.fetch(new Request('http://x/api/v2/openapi.json'), host.env)).json();
    expect(fromHost).toEqual(file);
    expect(fromApp).toEqual(file);
    expect(app.openapiDocument()).toEqual(file);
    // the demo's answers: each route with an example that answers 2xx shows it as a response example
    const shown = (d: Doc) =>
      Object.values(d.paths)
        .flatMap((p) => Object.values(p))
        .filter((op) =>
          Object.entries(op.responses).some(
            ([s, r]) =>
              /^2/.test(s) &&
              Object.values((r as { content?: Record<string, { examples?: object }> }).content ?? {}).some(
                (c) => Object.keys(c.examples ?? {}).length > 0,
              ),
          ),
        ).length;
    expect(shown(file)).toBeGreaterThanOrEqual(85);
    const realm = file.paths['/api/v2/kerberos/realm/{name}/details'].get.responses['200'] as {
      content: Record<string, { examples: Record<string, { value: { raw: string } }> }>;
    };
    expect(realm.content['application/json'].examples.example1.value.raw).toBe(
      readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'),
    );
  });

  it('is served by dist/app.mjs, with its paths under VARS.basePath, and the routes move there too', async () => {
    const app = (
      (await import(pathToFileURL(join(dist, 'app.mjs')).href)) as {
        default: { fetch(r: Request, env: unknown): Promise<Response> };
      }
    ).default;
    const env = { ...host.env, VARS: { ...host.env.VARS, basePath: '/mgmt' } };
    const res = await app.fetch(new Request('http://x/mgmt/openapi.json'), env);
    expect(res.status).toBe(200);
    const served = (await res.json()) as Doc;
    expect(Object.keys(served.paths)).toContain('/mgmt/kerberos/conf');
    expect(Object.keys(served.paths).filter((p) => p.startsWith('/api/v2/'))).toEqual([]);
    expect((await app.fetch(new Request('http://x/api/v2/openapi.json'), env)).status).toBe(404);
    // a route under the new base path: its own 401 (no token), not the router's 404
    const unauth = await app.fetch(new Request('http://x/mgmt/kerberos/conf'), env);
    expect([unauth.status, ((await unauth.json()) as { error: { code: string } }).error.code]).toEqual([
      401,
      'unauthorized',
    ]);
    const root = await app.fetch(new Request('http://x/kerberos/conf'), {
      ...env,
      VARS: { ...env.VARS, basePath: '/' },
    });
    expect(root.status).toBe(401);
  });
});
