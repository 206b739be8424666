/**
 * The typed client (`ballast/client`: openapi-fetch over the types generated from the OpenAPI
 * document) against a demo host over HTTP: typed answers, typed error bodies, the token header.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBallastClient, type BallastClient } from '../../package/client';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';

const repo = resolve(import.meta.dirname, '../..');
let serving: Serving;
let state: string;
let api: BallastClient;
let anonymous: BallastClient;

beforeAll(async () => {
  execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });
  state = mkdtempSync(join(tmpdir(), 'ballast-client-'));
  const config = demoConfig(repo, 0, state);
  seedDemo(repo, config);
  serving = await serve({
    config,
    distDir: join(repo, 'dist'),
    signals: false,
    accessLog: false,
    log: () => undefined,
  });
  const { token } = await createToken(serving.host.db, 'admin', ['*']);
  api = createBallastClient({ baseUrl: serving.server.url, token });
  anonymous = createBallastClient({ baseUrl: serving.server.url });
}, 120_000);

afterAll(async () => {
  await serving?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('ballast/client on the demo', () => {
  it('reads a realm file, typed', async () => {
    const { data, error, response } = await api.GET('/api/v2/kerberos/realm/{name}/details', {
      params: { path: { name: 'lab' } },
    });
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    const raw: string | undefined = data?.raw;
    expect(raw).toBe(readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'));
  });

  it('sends a body and gets the error model back for an unknown name', async () => {
    const created = await api.POST('/api/v2/kerberos/realm/create', { body: { name: 'lab', conf: '[realms]\n' } });
    expect(created.response.status).toBe(409);
    expect(created.error?.error.code).toBe('conflict');
    const missing = await api.GET('/api/v2/network/interface/{device_name}/details', {
      params: { path: { device_name: 'nosuchdev0' } },
    });
    expect([missing.response.status, missing.error?.error.code]).toEqual([404, 'not_found']);
  });

  it('without a token: 401 unauthorized', async () => {
    const r = await anonymous.GET('/api/v2/s3/list');
    expect([r.response.status, r.error?.error.code]).toEqual([401, 'unauthorized']);
  });
});

describe('the client under another base path', () => {
  const urls = async (o: { baseUrl: string; basePath?: string }) => {
    const seen: string[] = [];
    const api = createBallastClient({
      ...o,
      fetch: (r: Request) => (seen.push(r.url), Promise.resolve(new Response('{}', { status: 200 }))),
    });
    await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
    await api.GET('/api/v2/kerberos/conf');
    return seen;
  };

  it('replaces /api/v2 by basePath after the base URL’s own path; without basePath nothing changes', async () => {
    expect(await urls({ baseUrl: 'http://h:1' })).toEqual([
      'http://h:1/api/v2/kerberos/realm/lab/details',
      'http://h:1/api/v2/kerberos/conf',
    ]);
    expect(await urls({ baseUrl: 'http://h:1/x/', basePath: '/' })).toEqual([
      'http://h:1/x/kerberos/realm/lab/details',
      'http://h:1/x/kerberos/conf',
    ]);
    expect(await urls({ baseUrl: 'http://h:1', basePath: '/mgmt/' })).toEqual([
      'http://h:1/mgmt/kerberos/realm/lab/details',
      'http://h:1/mgmt/kerberos/conf',
    ]);
    expect(await urls({ baseUrl: 'http://h:1', basePath: '/api/v2' })).toEqual([
      'http://h:1/api/v2/kerberos/realm/lab/details',
      'http://h:1/api/v2/kerberos/conf',
    ]);
  });
});
