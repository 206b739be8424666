/**
 * The demo appliance (npm start) answers every documented example of the keys routes with its
 * status, and the answer parses with the route's response schema. The demo's alice has three
 * authorized keys (one with options); root has a key pair. Then a few reads show what the demo
 * holds and that nothing outside its root is touched.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../handlers/core/route';
import authAdd from '../../handlers/keys/routes/auth-add';
import authList from '../../handlers/keys/routes/auth-list';
import authRemove from '../../handlers/keys/routes/auth-remove';
import pub from '../../handlers/keys/routes/pub';
import pubGenerate from '../../handlers/keys/routes/pub-generate';
import { authListAnswer } from '../../handlers/keys/responses';
import { makeDemoHost, repo, type TestHost } from '../helpers/host';

const ROUTES: RouteModule[] = [pub, pubGenerate, authList, authAdd, authRemove];

let d: TestHost;

beforeAll(async () => {
  d = await makeDemoHost({ routes: ROUTES });
});
afterAll(async () => {
  await d?.close();
});

async function call(method: string, path: string, o: { query?: Record<string, string>; body?: unknown } = {}) {
  const qs = o.query ? `?${new URLSearchParams(o.query)}` : '';
  const r = await d.call(method, `${path}${qs}`, { body: o.body });
  return { status: r.status, json: r.json };
}

describe('the demo appliance: keys', () => {
  it('starts with alice holding three keys, one with options', async () => {
    const r = await call('GET', '/api/v2/system/keys/auth', { query: { user: 'alice' } });
    expect(r.status).toBe(200);
    const list = authListAnswer.parse(r.json);
    expect(list.map((e) => [e.index, e.algo, e.comment, e.fingerprint])).toEqual([
      [0, 'ssh-rsa', 'backup key', '2d:83:ab:a9:b2:c2:3f:84:f9:68:02:5e:a0:d5:58:f6'],
      [1, 'ssh-ed25519', 'alice@old-laptop', '20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55'],
      [2, 'ecdsa-sha2-nistp256', 'alice@workstation', '37:7d:2a:66:2c:48:81:d4:dd:5f:bc:39:80:64:38:92'],
    ]);
    expect(
      list[0].line.startsWith(
        'from="10.0.0.0/8,192.168.1.*",no-port-forwarding,command="/usr/local/bin/backup --mode \\"full\\"" ssh-rsa ',
      ),
    ).toBe(true);
  });

  it('answers every example of every keys route with its status and schema', async () => {
    let n = 0;
    for (const r of ROUTES) {
      expect(r.meta.examples?.length, `${r.meta.method} ${r.meta.path} has examples`).toBeGreaterThan(0);
      for (const ex of r.meta.examples ?? []) {
        const res = await call(r.meta.method, r.meta.path, { query: ex.query, body: ex.body });
        expect([r.meta.path, ex.summary, res.status], JSON.stringify(res.json)).toEqual([
          r.meta.path,
          ex.summary,
          ex.status ?? 200,
        ]);
        if (res.status === 200)
          expect(r.schemas.response.safeParse(res.json).success, `${ex.summary}: response schema`).toBe(true);
        n++;
      }
    }
    expect(n).toBe(8);
  });

  it('after the examples: the backup key was added and the old laptop key removed, the rest kept byte for byte', async () => {
    const file = readFileSync(join(d.root, 'home/alice/.ssh/authorized_keys'), 'utf8');
    const seed = readFileSync(join(repo, 'fixtures/demo/files/home/alice/.ssh/authorized_keys'), 'utf8');
    const oldLaptop = seed.split('\n').find((l) => l.endsWith('alice@old-laptop'));
    expect(file).toBe(
      `${seed.replace(`${oldLaptop}\n`, '')}from="10.0.8.0/24",command="/usr/local/bin/backup-receive",restrict ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK1VARsg9gxZaq6VedNAqHTI4N2EARHphOP5q9n6zqpH backup@vault01\n`,
    );
    const kinds = d.host.db.prepare("SELECT kind, data FROM events WHERE kind LIKE 'keys.%' ORDER BY seq").all() as {
      kind: string;
      data: string;
    }[];
    expect(kinds.map((k) => [k.kind, JSON.parse(k.data)])).toEqual([
      ['keys.public.regenerated', { user: 'root' }],
      ['keys.public.regenerated', { user: 'alice' }],
      [
        'keys.authorized.added',
        { user: 'alice', fingerprint: 'f9:bd:e4:5e:0e:5c:ff:0c:ea:6a:a2:02:1e:b1:c7:55', comment: 'backup@vault01' },
      ],
      ['keys.authorized.removed', { user: 'alice', fingerprint: '20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55' }],
    ]);
  });

  it("keeps root's key pair (a replayed ssh-keygen writes nothing) and refuses users it does not manage", async () => {
    const r = await call('GET', '/api/v2/system/keys/pub');
    expect(r).toEqual({
      status: 200,
      json: { public_key: readFileSync(join(repo, 'fixtures/demo/files/root/.ssh/id_ed25519.pub'), 'utf8').trim() },
    });
    expect(readdirSync(join(d.root, 'root/.ssh')).sort()).toEqual(['authorized_keys', 'id_ed25519.pub']);
    expect(readdirSync(join(d.root, 'home/alice/.ssh')).sort()).toEqual(['authorized_keys']);
    expect((await call('GET', '/api/v2/system/keys/auth', { query: { user: 'nobody' } })).status).toBe(403);
    const bob = await call('GET', '/api/v2/system/keys/auth', { query: { user: 'bob' } });
    expect(bob).toEqual({
      status: 404,
      json: { error: expect.objectContaining({ code: 'not_found', message: 'no user bob in the user database' }) },
    });
  });
});
