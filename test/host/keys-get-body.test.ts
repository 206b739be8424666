/**
 * Host tier: the spec sends `user` in the body of the keys GET routes. Over real HTTP (the demo
 * host, built bundles) a GET with the JSON body {"user": "alice"} answers for alice, as the query
 * parameter does; the URL wins over the body.
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { distDir, repo } from '../helpers/host';

let s: Serving;
let state: string;
let token: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'ballast-keys-host-'));
  const config = demoConfig(repo, 0, state);
  seedDemo(repo, config);
  s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
  token = (await createToken(s.host.db, 'admin', ['*'])).token;
});
afterAll(async () => {
  await s?.stop();
  rmSync(state, { recursive: true, force: true });
});

function get(path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${s.server.url}${path}`,
      {
        method: 'GET',
        headers: {
          token,
          ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const comments = (r: { json: unknown }) => (r.json as { comment: string }[]).map((e) => e.comment);

describe('keys GET routes take `user` from a JSON body', () => {
  it('GET /system/keys/auth with {"user":"alice"} lists alice', async () => {
    const r = await get('/api/v2/system/keys/auth', { user: 'alice' });
    expect([r.status, comments(r)]).toEqual([200, ['backup key', 'alice@old-laptop', 'alice@workstation']]);
    const root = await get('/api/v2/system/keys/auth');
    expect([root.status, comments(root)]).toEqual([200, ['ops@admin-ws']]);
    const url = await get('/api/v2/system/keys/auth?user=root', { user: 'alice' });
    expect(comments(url)).toEqual(['ops@admin-ws']);
  });

  it('GET /system/keys/pub with {"user":"alice"} answers for alice (404: no key pair)', async () => {
    expect((await get('/api/v2/system/keys/pub', { user: 'alice' })).status).toBe(404);
    expect((await get('/api/v2/system/keys/pub')).status).toBe(200);
  });
});
