/**
 * `serve --demo --isolate`: the routes run in the workerd isolate, and the docs page and the
 * OpenAPI document are still served (by the host, ahead of the isolate), with the same CSP and
 * the same bytes as the in-process host; other requests go to the isolate.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { DOCS_CSP } from '../../runtime/docs-page';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { rawGet } from '../helpers/raw-get';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');

let serving: Serving;
let state: string;
let base: string;

beforeAll(async () => {
  execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });
  state = mkdtempSync(join(tmpdir(), 'ballast-docs-isolate-'));
  const config = { ...demoConfig(repo, 0, state), isolate: true };
  seedDemo(repo, config);
  serving = await serve({ config, distDir: dist, signals: false, accessLog: false, log: () => undefined });
  base = `${serving.server.url}/api/v2`;
}, 120_000);

afterAll(async () => {
  await serving?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('serve --demo --isolate', () => {
  it('serves the docs page and its assets without a token, with the strict CSP', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    const html = await page.text();
    expect(html).toContain('data-openapi="/api/v2/openapi.json"');
    const js = await fetch(`${base}/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect(Buffer.from(await js.arrayBuffer()).equals(readFileSync(join(dist, 'docs/swagger-ui-bundle.js')))).toBe(
      true,
    );
    expect((await fetch(`${base}/docs/nosuch.js`)).status).toBe(404);
  });

  it('the assets pass the request headers through: ETag and 304, gzip bytes unchanged by the hop', async () => {
    const url = `${base}/docs/swagger-ui-bundle.js`;
    const file = readFileSync(join(dist, 'docs/swagger-ui-bundle.js'));
    const plain = await rawGet(url);
    expect([plain.status, plain.headers['content-encoding']]).toEqual([200, undefined]);
    expect(plain.body.equals(file)).toBe(true);
    const zipped = await rawGet(url, { 'accept-encoding': 'gzip' });
    expect([zipped.status, zipped.headers['content-encoding'], zipped.headers.vary]).toEqual([
      200,
      'gzip',
      'accept-encoding',
    ]);
    expect(zipped.headers['content-length']).toBe(String(zipped.body.length));
    expect(gunzipSync(zipped.body).equals(file)).toBe(true);
    for (const [etag, ae] of [
      [plain.headers.etag!, 'identity'],
      [zipped.headers.etag!, 'gzip'],
    ]) {
      const r = await rawGet(url, { 'if-none-match': etag, 'accept-encoding': ae });
      expect([r.status, r.body.length, r.headers.etag]).toEqual([304, 0, etag]);
    }
  });

  it('serves openapi.json without a token: the built document', async () => {
    const r = await fetch(`${base}/openapi.json`);
    expect(r.status).toBe(200);
    const doc = (await r.json()) as { openapi: string; paths: Record<string, unknown> };
    const built = JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(Object.keys(built.paths).sort());
  });

  it('still sends the routes to the isolate: a token is needed, and with one the route answers', async () => {
    expect((await fetch(`${base}/kerberos/conf`)).status).toBe(401);
    const { token } = await createToken(serving.host.db, 'docs-isolate', ['*']);
    const r = await fetch(`${base}/kerberos/conf`, { headers: { token } });
    expect(r.status).toBe(200);
    expect(JSON.stringify(await r.json())).toContain('default_realm = CORP.EXAMPLE.COM');
    // a POST to a page path is not a page: the isolate's router answers it
    expect((await fetch(`${base}/openapi.json`, { method: 'POST' })).status).not.toBe(200);
  });
});
