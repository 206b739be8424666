import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { serve, type Serving } from '../../runtime/serve';
import { startServer } from '../../runtime/http/server';
import { mapGetBodyToQuery, type Call } from '../../handlers/core/pipeline';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig } from '../helpers/host';
import { CONNECTION_HEADER } from '../../handlers/core/route';
import { privateDir } from '../helpers/tmp';
import { answerFrom, errorOf, jsonOf } from '../helpers/answers';
import type { Krb5Conf } from '../../handlers/kerberos/parse/krb5-conf';

const KRB5 = 'includedir /etc/krb5.conf.d\n\n[libdefaults]\n\tdefault_realm = EXAMPLE.TEST\n';

let s: Serving;
let admin: string;
let reader: string;
let base: string;

beforeAll(async () => {
  const { config } = makeTestConfig({ limits: { ...makeTestConfig().config.limits, bodyBytes: 4096 } });
  mkdirSync(dirname(config.paths.krb5Conf), { recursive: true });
  writeFileSync(config.paths.krb5Conf, KRB5);
  s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
  admin = (await createToken(s.host.db, 'admin', ['*'])).token;
  reader = (await createToken(s.host.db, 'fs-reader', ['fs:read'])).token;
  base = `${s.server.url}/api/v2`;
});
afterAll(() => s.stop());

describe('Node host over real HTTP', () => {
  it('serves GET /kerberos/conf with the spec headers', async () => {
    const r = await fetch(`${base}/kerberos/conf`, { headers: { token: admin } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-powered-by')).toBe('Ballast');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = await jsonOf<{ raw: string; json: Krb5Conf }>(r);
    expect(body.raw).toBe(KRB5);
    expect(body.json.sections.libdefaults.default_realm).toBe('EXAMPLE.TEST');
  });

  it('401 / 403 / 404 / 405 are JSON in the one error shape', async () => {
    const none = await fetch(`${base}/kerberos/conf`);
    expect(none.status).toBe(401);
    expect(errorOf(await answerFrom(none)).code).toBe('unauthorized');
    const forbidden = await fetch(`${base}/kerberos/conf`, { headers: { token: reader } });
    expect(forbidden.status).toBe(403);
    expect(errorOf(await answerFrom(forbidden))).toMatchObject({
      code: 'forbidden',
      message: 'token lacks permission kerberos:read',
    });
    const unknown = await fetch(`${base}/no/such/route`, { headers: { token: admin } });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const wrong = await fetch(`${base}/kerberos/conf`, { method: 'POST', headers: { token: admin }, body: '{}' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('/ and the base path point to the docs page and the document, without a token', async () => {
    for (const url of [`${s.server.url}/`, base, `${base}/`]) {
      const r = await fetch(url);
      expect(r.status, url).toBe(200);
      expect(await r.json()).toEqual({ name: 'Ballast', docs: '/api/v2/docs', openapi: '/api/v2/openapi.json' });
    }
    expect((await fetch(`${s.server.url}/`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await fetch(`${s.server.url}/api`)).status).toBe(404);
  });

  it('HEAD answers like GET without a body; OPTIONS is a CORS preflight', async () => {
    const head = await fetch(`${base}/kerberos/conf`, { method: 'HEAD', headers: { token: admin } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const pre = await fetch(`${base}/kerberos/conf`, { method: 'OPTIONS' });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toContain('token');
  });

  it('413 for a body over the limit, answered as JSON', async () => {
    const r = await fetch(`${base}/kerberos/conf`, {
      method: 'POST',
      headers: { token: admin, 'content-type': 'application/json' },
      body: JSON.stringify({ x: 'a'.repeat(10_000) }),
    });
    expect(r.status).toBe(413);
    expect(errorOf(await answerFrom(r)).code).toBe('payload_too_large');
  });

  it('GET bodies are mapped onto the query; the URL wins; non-objects and non-scalar fields are refused', () => {
    const u = new URL('http://x/a?user=keep');
    const get = (url: URL, bodyText: string): Call => ({
      method: 'GET',
      url,
      bodyText,
      header: () => null,
      connection: {},
      requestId: 'r-12345678',
    });
    mapGetBodyToQuery(get(u, JSON.stringify({ user: 'other', verbose: true, n: 3 })));
    expect(u.searchParams.get('user')).toBe('keep');
    expect(u.searchParams.get('verbose')).toBe('true');
    expect(u.searchParams.get('n')).toBe('3');
    // dropping it would ignore a field the client sent: the route refuses unknown keys instead
    expect(() => mapGetBodyToQuery(get(new URL('http://x/'), '{"nested":{"a":1}}'))).toThrow(/body\.nested/);
    expect(() => mapGetBodyToQuery(get(new URL('http://x/'), '[1]'))).toThrow(/JSON object/);
  });

  it('isolate mode: a GET body reaches the app as query parameters, as in-process', async () => {
    const seen: string[] = [];
    const { config } = makeTestConfig();
    const srv = await startServer({
      config,
      env: s.host.env,
      handler: { fetch: async (req) => (seen.push(req.url), new Response('{}')) },
    });
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${srv.url}/api/v2/system/keys/auth?x=url`, { method: 'GET', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      const body = '{"user":"alice","x":"body"}';
      req.setHeader('content-type', 'application/json');
      req.setHeader('content-length', String(Buffer.byteLength(body)));
      req.end(body);
    });
    await srv.shutdown(1000);
    expect(status).toBe(200);
    expect(seen.map((u) => new URL(u).search)).toEqual(['?x=url&user=alice']);
  });

  it('a client cannot forge the connection header the lockout guard relies on', async () => {
    const seen: string[] = [];
    const { config } = makeTestConfig();
    const srv = await startServer({
      config,
      env: s.host.env,
      handler: { fetch: async (req) => (seen.push(req.headers.get(CONNECTION_HEADER) ?? ''), new Response('{}')) },
    });
    await fetch(`${srv.url}/x`, { headers: { [CONNECTION_HEADER]: JSON.stringify({ localAddress: '10.9.9.9' }) } });
    await srv.shutdown(1000);
    expect(seen).toHaveLength(1);
    expect(JSON.parse(seen[0])).toEqual({ localAddress: '127.0.0.1', remoteAddress: '127.0.0.1' });
  });

  it('a request over the time limit gets a 504 JSON error', async () => {
    const { config } = makeTestConfig();
    config.limits.requestTimeoutMs = 100;
    const srv = await startServer({
      config,
      env: s.host.env,
      handler: { fetch: () => new Promise<Response>(() => undefined) },
    });
    const r = await fetch(`${srv.url}/x`);
    expect(r.status).toBe(504);
    expect(errorOf(await answerFrom(r)).code).toBe('timeout');
    await srv.shutdown(100);
  });

  it('graceful shutdown lets an in-flight request finish and refuses new ones', async () => {
    const { config } = makeTestConfig();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const inHandler = new Promise<void>((r) => (arrived = r));
    const srv = await startServer({
      config,
      env: s.host.env,
      handler: { fetch: async () => (arrived(), await gate, Response.json({ done: true })) },
    });
    const inflight = fetch(`${srv.url}/slow`);
    await inHandler; // the request is in flight: the handler runs and waits on the gate
    const stopping = srv.shutdown(5000); // closes the listener at once (closing is set synchronously)
    release();
    const r = await inflight;
    expect(r.status).toBe(200);
    expect(await jsonOf(r)).toEqual({ done: true });
    await stopping;
    await expect(fetch(`${srv.url}/again`)).rejects.toThrow();
  });

  it('serves HTTPS and reloads its certificate without a restart', async () => {
    const dir = privateDir('ballast-tls');
    const mk = (cn: string) =>
      execFileSync(
        '/usr/bin/openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          `/CN=${cn}`,
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
    mk('first.test');
    const { config } = makeTestConfig();
    config.tls = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    const srv = await startServer({
      config,
      env: s.host.env,
      handler: { fetch: async () => Response.json({ ok: true }) },
    });
    const peerCn = () =>
      new Promise<string>((resolve, reject) => {
        const req = https.get(`${srv.url}/`, { rejectUnauthorized: false, agent: false }, (res) => {
          const cert = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
          res.resume();
          resolve(String(cert.subject.CN));
        });
        req.on('error', reject);
      });
    expect(await peerCn()).toBe('first.test');
    mk('second.test');
    expect(readFileSync(join(dir, 'cert.pem'), 'utf8')).toContain('BEGIN CERTIFICATE');
    srv.reloadTls();
    expect(await peerCn()).toBe('second.test');
    await srv.shutdown(1000);
  });
});

describe('access log', () => {
  it('batches lines and writes them all on flush, oldest first', async () => {
    const { bufferedAccessLog } = await import('../../runtime/http/access-log');
    const writes: string[] = [];
    const log = bufferedAccessLog((c) => writes.push(c), 10_000);
    log.line('GET /a 200');
    log.line('GET /b 404');
    expect(writes).toEqual([]);
    log.flush();
    expect(writes).toHaveLength(1);
    expect(
      writes[0]
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ').slice(1).join(' ')),
    ).toEqual(['GET /a 200', 'GET /b 404']);
    log.flush();
    expect(writes).toHaveLength(1);
  });
});
