/**
 * createBallast (runtime/embed.ts, `ballast/host`): one call builds the host, its bindings and a
 * bound fetch; a missing binding stops it at start (named), not at the first request; a
 * client's x-ballast-connection header never reaches the lockout guard, the embedder's
 * `connection` argument does. And `bind(env)` of dist/app.mjs checks the same at start.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBallast, type Ballast } from '../../runtime/embed';
import { missingBindings } from '../../runtime/embed-env';
import { createToken } from '../../runtime/tokens';
import { demoConfig, seedDemo } from '../../runtime/demo';

const repo = resolve(import.meta.dirname, '../..');
const states: string[] = [];
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ballast-embed-'));
  states.push(d);
  return d;
};
afterAll(() => {
  for (const d of states) rmSync(d, { recursive: true, force: true });
});

describe('createBallast', () => {
  let b: Ballast;
  let token: string;
  beforeAll(async () => {
    // the demo as `demo: true` makes it, with the lockout guard's old default (a 409, no window:
    // settings.network.confirmDefaultS 0) so the guard's verdict shows in the status
    const config = demoConfig(repo, 0, stateDir());
    config.settings = { ...config.settings, network: { confirmDefaultS: 0 } };
    seedDemo(repo, config);
    b = await createBallast({ config, basePath: '/mgmt', log: () => undefined });
    ({ token } = await createToken(b.host.db, 'admin', ['*']));
  });
  afterAll(async () => {
    await b?.close();
  });

  it('serves the routes, the document and the docs page under the base path it was given', async () => {
    expect(b.basePath).toBe('/mgmt');
    const r = await b.fetch(new Request('http://x/mgmt/kerberos/realm/lab/details', { headers: { token } }));
    expect(r.status).toBe(200);
    expect(((await r.json()) as { raw: string }).raw).toBe(
      readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'),
    );
    const doc = (await (await b.fetch(new Request('http://x/mgmt/openapi.json'))).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths)).toContain('/mgmt/kerberos/realm/{name}/details');
    const docs = await b.fetch(new Request('http://x/mgmt/docs'));
    expect([docs.status, docs.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect((await b.fetch(new Request('http://x/api/v2/kerberos/conf', { headers: { token } }))).status).toBe(404);
  });

  it('drops a client-sent x-ballast-connection; the connection argument reaches the lockout guard', async () => {
    // eno2 carries 10.1.2.50 on the demo: unconfiguring it from a connection to that address is refused
    const unconfigure = (headers: Record<string, string>) =>
      new Request('http://x/mgmt/network/interface/eno2/unconfigure', {
        method: 'POST',
        headers: { token, 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    const guarded = await b.fetch(unconfigure({}), { localAddress: '10.1.2.50', remoteAddress: '10.1.2.9' });
    expect(guarded.status).toBe(409);
    expect(((await guarded.json()) as { error: { message: string } }).error.message).toMatch(
      /refusing to unconfigure eno2: it carries 10\.1\.2\.50/,
    );
    // a client claiming another address is not believed: the guard sees the embedder's connection
    const spoofed = await b.fetch(
      unconfigure({ 'x-ballast-connection': JSON.stringify({ localAddress: '192.0.2.1' }) }),
      { localAddress: '10.1.2.50' },
    );
    expect(spoofed.status).toBe(409);
    // nor a client claiming the guarded address when the embedder says nothing (it would get a 409)
    const claimed = await b.fetch(
      unconfigure({ 'x-ballast-connection': JSON.stringify({ localAddress: '10.1.2.50' }) }),
    );
    expect(claimed.status).toBe(200);
  });
});

describe('a missing binding stops the start', () => {
  it('createBallast refuses an env without SYSTEM, naming it, and leaves no database open', async () => {
    const dir = stateDir();
    await expect(
      createBallast({ demo: { stateDir: dir }, bindings: { SYSTEM: undefined }, log: () => undefined }),
    ).rejects.toThrow(/^ballast: env lacks SYSTEM: a Fetcher answering POST \/system\/<op>/);
    // the host it built was closed: a second one on the same state directory starts
    const again = await createBallast({ demo: { stateDir: dir }, log: () => undefined });
    await again.close();
  });

  it('missingBindings names each absent or malformed binding, and nothing for a complete env', () => {
    const vars = { productName: 'p', hostId: 'h', paths: {}, bin: {}, settings: {} };
    const fetcher = { fetch: () => Promise.resolve(new Response()) };
    expect(missingBindings({ SYSTEM: fetcher, DB_FETCH: fetcher, EVENTS_FETCH: fetcher, VARS: vars })).toEqual([]);
    expect(
      missingBindings({ SYSTEM: fetcher, DB: { prepare: () => 0 }, EVENTS: { send: () => 0 }, VARS: vars }),
    ).toEqual(['DB (a D1 database made from dist/migrations/) or DB_FETCH (a Fetcher)']);
    expect(
      missingBindings({ SYSTEM: {}, DB_FETCH: fetcher, EVENTS: {}, VARS: { ...vars, hostId: '', bin: null } }),
    ).toEqual([
      'SYSTEM: a Fetcher answering POST /system/<op> (docs/bindings-protocol.md)',
      'EVENTS ({ send(event) }) or EVENTS_FETCH (a Fetcher)',
      'VARS.hostId: a non-empty string',
      'VARS.bin: an object',
    ]);
    expect(missingBindings(undefined)).toEqual(['env: not an object']);
  });

  it("dist/app.mjs's bind(env) refuses an incomplete env at once, and serves with a complete one", async () => {
    const app = (await import(pathToFileURL(join(repo, 'dist/app.mjs')).href)) as {
      bind(env: unknown): { fetch(r: Request): Promise<Response> };
    };
    expect(() => app.bind({ VARS: { productName: 'p' } })).toThrow(
      /^ballast: env lacks SYSTEM: .*; DB .* or DB_FETCH .*; EVENTS .*; VARS\.hostId: a non-empty string; VARS\.paths: an object; VARS\.bin: an object; VARS\.settings: an object$/,
    );
    const b = await createBallast({ demo: { stateDir: stateDir() }, log: () => undefined });
    try {
      const bound = app.bind(b.env);
      expect((await bound.fetch(new Request('http://x/api/v2/kerberos/conf'))).status).toBe(401);
    } finally {
      await b.close();
    }
  });
});
