/**
 * The Node host's request path: the app matches routes with itty-router (raw params, overlapping
 * paths tried in order), and the reply's JSON text goes
 * to the socket with its byte length (multi-byte characters included).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import { createApp } from '../../handlers/core/app';
import type { RouteModule } from '../../handlers/core/route';
import type { Call } from '../../handlers/core/pipeline';
import { startServer } from '../../runtime/http/server';
import { makeTestConfig, repo } from '../helpers/host';
import type { Env } from '../../handlers/core/bindings';

describe('route matching', () => {
  // a module that answers with the raw params it was handed, so the match itself is observable
  const echo = (name: string) =>
    ({
      handle: async (_call: Call, params: Record<string, string>) => ({
        status: 200,
        headers: {},
        body: JSON.stringify({ name, params }),
      }),
    }) as unknown as RouteModule;
  const app = createApp([
    { method: 'POST', path: '/api/v2/pod/:name/set', load: () => echo('set') },
    { method: 'GET', path: '/api/v2/pod/suggested/:name', load: () => echo('suggested') },
    { method: 'GET', path: '/api/v2/files/:rest+', load: () => echo('rest') },
    { method: 'GET', path: '/api/v2/x/:name.json', load: () => echo('dot') },
  ]);
  const env = { VARS: { basePath: '/api/v2' } } as unknown as Env;
  const ask = async (method: string, path: string) => {
    const r = await app.handle(
      { method, url: new URL(path, 'http://h'), header: () => null, connection: {}, requestId: 'r' },
      env,
    );
    return {
      status: r.status,
      body: typeof r.body === 'string' ? (JSON.parse(r.body) as unknown) : null,
      allow: r.headers.allow,
    };
  };

  it('params are the raw segments, as itty-router matches them', async () => {
    expect((await ask('POST', '/api/v2/pod/a%20b/set')).body).toEqual({ name: 'set', params: { name: 'a%20b' } });
    expect((await ask('POST', '/api/v2/pod/a%20b/set/')).body).toEqual({ name: 'set', params: { name: 'a%20b' } });
    expect((await ask('POST', '/api/v2/pod/a/b/set')).status).toBe(404);
    expect((await ask('GET', '/api/v2/files/a/b/c')).body).toEqual({ name: 'rest', params: { rest: 'a/b/c' } });
    expect((await ask('GET', '/api/v2/x/report.json')).body).toEqual({ name: 'dot', params: { name: 'report' } });
    expect((await ask('GET', '/api/v2/x/reportxjson')).status).toBe(404);
  });

  it('overlapping paths: the first path that has the method serves; else the first match answers 405', async () => {
    // `/pod/suggested/set` matches `/pod/:name/set` (POST only) and `/pod/suggested/:name` (GET)
    expect((await ask('GET', '/api/v2/pod/suggested/set')).body).toEqual({
      name: 'suggested',
      params: { name: 'set' },
    });
    expect((await ask('POST', '/api/v2/pod/suggested/set')).body).toEqual({
      name: 'set',
      params: { name: 'suggested' },
    });
    const r = await ask('DELETE', '/api/v2/pod/suggested/set');
    expect(r.status).toBe(405);
    expect(r.allow).toBe('POST, OPTIONS');
  });

  it('no product file carries a copy of the pattern builder: the app imports itty-router', () => {
    const app = readFileSync(join(repo, 'handlers/core/app.ts'), 'utf8');
    expect(app).toMatch(/from 'itty-router'/);
    expect(app).not.toMatch(/\(\?<\$2>/);
    expect(readFileSync(join(repo, 'handlers/core/route.ts'), 'utf8')).not.toMatch(/new RegExp|RegExp\(/);
  });
});

describe('reply writing', () => {
  it('the body is sent as UTF-8 with its byte length', async () => {
    const { config } = makeTestConfig();
    const body = JSON.stringify({ name: 'Größe — 東京 🚀' });
    const s = await startServer({
      config,
      env: { VARS: { basePath: '/api/v2' } } as unknown as Env,
      handler: {
        fetch: () => Promise.reject(new Error('not used')),
        handle: async () => ({ status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body }),
      },
    });
    try {
      const got = await new Promise<{ len: string | undefined; bytes: Buffer }>((resolve, reject) => {
        http
          .get(`${s.url}/api/v2/x`, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ len: res.headers['content-length'], bytes: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
      expect(got.bytes.equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(got.len).toBe(String(Buffer.byteLength(body)));
      expect(Number(got.len)).toBeGreaterThan(body.length);
    } finally {
      await s.shutdown(100);
    }
  });
});
