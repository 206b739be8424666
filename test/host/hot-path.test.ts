/**
 * The Node host's request path: the app matches routes on the pathname it was given with the
 * same patterns itty-router built (so matching did not change), and the reply's JSON text goes
 * to the socket with its byte length (multi-byte characters included).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import { Router } from 'itty-router';
import { pathPattern } from '../../handlers/core/app';
import { startServer } from '../../runtime/http/server';
import { distDir, makeTestConfig } from '../helpers/host';
import type { Env } from '../../handlers/core/bindings';

const manifest = JSON.parse(readFileSync(join(distDir, 'manifest.json'), 'utf8')) as { routes: { path: string }[] };

describe('route matching', () => {
  it('every manifest path and a few shapes give the pattern itty-router builds', () => {
    const paths = [...manifest.routes.map((r) => r.path), '/a/:rest+', '/files/*', '/x/:name.json', '//double//'];
    expect(manifest.routes.length).toBeGreaterThan(50);
    for (const p of paths) {
      const router = Router();
      router.get(p, () => undefined);
      const itty = (router.routes[0] as unknown[])[1] as RegExp;
      expect(pathPattern(p).source, p).toBe(itty.source);
    }
  });

  it('params are the raw segments', () => {
    expect(pathPattern('/api/v2/pod/:name/set').exec('/api/v2/pod/a%20b/set')?.groups).toEqual({ name: 'a%20b' });
    expect(pathPattern('/api/v2/pod/:name/set').exec('/api/v2/pod/a/b/set')).toBeNull();
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
