/**
 * The demo appliance (npm start) answers every certificate route's examples: its seed trust
 * store (two CAs), its served chain, and the replayed update-ca-certificates / openssl runs
 * match, argv for argv, what the routes run with the demo's paths and settings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_NEW_CHAIN } from '../../handlers/certificate/examples';
import { examplePath } from '../../runtime/demo-examples';
import { makeDemoHost, repo, type TestHost } from '../helpers/host';
import { CERTIFICATE_ROUTES } from './certificate-helpers';

/** the demo with its certificate settings changed by `certificate` */
const startDemo = (certificate?: Record<string, unknown>): Promise<TestHost> =>
  makeDemoHost({
    routes: CERTIFICATE_ROUTES,
    configure: (config) => {
      if (certificate)
        config.settings = {
          ...config.settings,
          certificate: { ...(config.settings.certificate as Record<string, unknown>), ...certificate },
        };
    },
  });

async function call(
  d: TestHost,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const r = await d.call(method, path, { body });
  return { status: r.status, json: r.json };
}

const seed = (rel: string) => readFileSync(join(repo, 'fixtures/demo/files', rel), 'utf8');

describe('the demo appliance, every example of every certificate route', () => {
  let d: TestHost;
  beforeAll(async () => {
    d = await startDemo();
  });
  afterAll(async () => {
    await d?.close();
  });

  it('answers each example with its status and a body of the route schema', async () => {
    let n = 0;
    for (const r of CERTIFICATE_ROUTES) {
      expect(r.meta.examples?.length, `${r.meta.method} ${r.meta.path} has examples`).toBeGreaterThan(0);
      for (const ex of r.meta.examples ?? []) {
        const path = examplePath(r.meta.path, ex);
        // what the example needs first (commit: an ingest), as demo-examples.test.ts runs it
        for (const b of ex.before ?? [])
          expect((await call(d, b.method, `/api/v2${b.path}`, b.body)).status).toBe(b.status ?? 200);
        const res = await call(d, r.meta.method, path, r.meta.method === 'GET' ? undefined : (ex.body ?? {}));
        const want = ex.status ?? 200;
        expect([r.meta.path, ex.summary, res.status], JSON.stringify(res.json)).toEqual([
          r.meta.path,
          ex.summary,
          want,
        ]);
        if (want === 200)
          expect(r.schemas.response.safeParse(res.json).success, `${r.meta.path} answer matches its schema`).toBe(true);
        n++;
      }
    }
    expect(n).toBeGreaterThanOrEqual(8);
  });

  it('ingest → retrieve → commit (the commit example answers {} once an ingest waits)', async () => {
    const ingestEx = CERTIFICATE_ROUTES.find((r) => r.meta.path.endsWith('/certificate/ingest'))!.meta.examples![0];
    const r = await call(d, 'POST', '/api/v2/certificate/ingest', ingestEx.body);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ confirmationTimeout: 30 });
    const now = await call(d, 'POST', '/api/v2/certificate/retrieve', { pieces: { intermediate: true } });
    expect(now.json).toEqual([
      { piece: 'intermediate', output: new X509Certificate(DEMO_NEW_CHAIN.intermediate).toString() },
    ]);
    expect(await call(d, 'POST', '/api/v2/certificate/commit', {})).toEqual({ status: 200, json: {} });
    expect(await call(d, 'POST', '/api/v2/certificate/commit', {})).toMatchObject({ status: 409 });
  });
});

describe('the demo appliance, scenarios', () => {
  let d: TestHost;
  beforeAll(async () => {
    d = await startDemo({ commitWindowSeconds: 0.3 });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('lists its two CAs and serves its chain', async () => {
    expect(await call(d, 'GET', '/api/v2/certificate')).toEqual({
      status: 200,
      json: ['corp-root-ca.crt', 'partner-ca.crt'],
    });
    const chain = await call(d, 'POST', '/api/v2/certificate/retrieve', {
      pieces: { root: true, intermediate: true, server: true },
    });
    expect(chain.json).toEqual([
      { piece: 'root', output: seed('etc/ballast/tls/root.crt') },
      { piece: 'intermediate', output: seed('etc/ballast/tls/intermediate.crt') },
      { piece: 'server', output: seed('etc/ballast/tls/server.crt') },
    ]);
  });

  it('ingest → retrieve shows the new server certificate → no commit → rolled back to the seed chain', async () => {
    const rolled = new Promise<void>((resolve) =>
      d.host.events.onEvent(() => {
        if (d.host.db.prepare("SELECT 1 FROM events WHERE kind = 'certificate.tls.rolled_back'").get()) resolve();
      }),
    );
    const r = await call(d, 'POST', '/api/v2/certificate/ingest', { pieces: DEMO_NEW_CHAIN });
    expect(r.status).toBe(200);
    const now = await call(d, 'POST', '/api/v2/certificate/retrieve', { pieces: { server: true } });
    expect(now.json).toEqual([{ piece: 'server', output: new X509Certificate(DEMO_NEW_CHAIN.server).toString() }]);
    await rolled;
    const after = await call(d, 'POST', '/api/v2/certificate/retrieve', {
      pieces: { server: true, private_key: true },
    });
    expect(after.json).toEqual([
      { piece: 'server', output: seed('etc/ballast/tls/server.crt') },
      { piece: 'private_key', output: seed('etc/ballast/tls/server.key') },
    ]);
  });
});
