/**
 * The demo appliance (npm start) is the MGS+MDS node of `demofs` (two OSTs on 10.10.0.21@tcp) and
 * a client of it. Every example of every dfs route answers its status on a FRESH demo, and the
 * answer has the route's response shape; a few answers are checked value for value.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { createHost, type Host } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';
import { jsonOf } from '../helpers/answers';
import { distDir, repo } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';

let host: Host;
let token: string;
let state: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'ballast-demo-dfs-'));
  const config = demoConfig(repo, 0, state);
  seedDemo(repo, config);
  host = await createHost({ config, distDir, routes: DFS_ROUTES, log: () => undefined });
  token = (await createToken(host.db, 'admin', ['*'])).token;
});
afterAll(async () => {
  await host?.close();
  rmSync(state, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  query?: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const url = new URL(`http://demo.local${path}`);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
  const res = await host.app.fetch(
    new Request(url, {
      method,
      headers: { token, 'content-type': 'application/json' },
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    }),
    host.env,
  );
  return { status: res.status, json: await jsonOf(res) };
}

const fill = (path: string, params: Record<string, string> = {}) =>
  path.replace(/:([A-Za-z_]+)/g, (_, k: string) => encodeURIComponent(params[k] ?? ''));

describe('the demo appliance, dfs area', () => {
  it('has 23 routes, each with at least one example', () => {
    expect(DFS_ROUTES).toHaveLength(23);
    for (const r of DFS_ROUTES) expect(r.meta.examples?.length, r.meta.path).toBeGreaterThan(0);
  });

  for (const r of DFS_ROUTES) {
    for (const ex of r.meta.examples ?? []) {
      it(`${r.meta.method} ${r.meta.path}: ${ex.summary}`, async () => {
        const res = await call(r.meta.method, fill(r.meta.path, ex.params), ex.query, ex.body);
        expect(res.status, JSON.stringify(res.json)).toBe(ex.status ?? 200);
        if ((ex.status ?? 200) === 200) expect(r.schemas.response.safeParse(res.json).success).toBe(true);
      });
    }
  }

  it('answers what the demo node knows', async () => {
    const mgs = await call('GET', '/api/v2/dfs/device/mgs');
    expect(mgs.json).toEqual({ uuid: 'MGS', filesystems: ['demofs'], fstype: 'zfs', mntdev: 'mgspool/mgs' });
    const fs = await call('GET', '/api/v2/dfs/fs/demofs/details');
    expect(fs.json).toMatchObject({
      warnings: '',
      parsed: [
        {
          uuid: 'demofs-MDT0000_UUID',
          '1kblocks': 41694848,
          used: 6272,
          available: 41686528,
          use: 1,
          mounted: '/mnt/lustre/demofs',
          filesystem: 'demofs',
          name: 'demofs-MDT0000',
          mgs: '10.10.0.11@tcp',
          index: 0,
          type: 'MDT',
          nid: '0@lo',
        },
        { uuid: 'demofs-OST0000_UUID', name: 'demofs-OST0000', type: 'OST', index: 0, nid: '10.10.0.21@tcp' },
        { uuid: 'demofs-OST0001_UUID', name: 'demofs-OST0001', type: 'OST', index: 1, nid: '10.10.0.21@tcp' },
        { uuid: 'filesystem_summary', '1kblocks': 198745088, name: 'filesystem_summary', filesystem: 'demofs' },
      ],
    });
    expect((await call('GET', '/api/v2/dfs/fs/otherfs/details')).status).toBe(404);
    expect((await call('GET', '/api/v2/dfs/lnet')).json).toEqual([
      { net_type: 'lo', local_ni_s: [{ nid: '0@lo', status: 'up' }] },
      { net_type: 'tcp', local_ni_s: [{ nid: '10.10.0.11@tcp', status: 'up', interfaces: { '0': 'eth1' } }] },
    ]);
  });

  it("wrote the persistent mount into its own fstab, never the machine's", async () => {
    const fstab = readFileSync(join(state, 'root', 'etc', 'fstab'), 'utf8');
    expect(fstab.split('\n').filter((l) => l.includes('/scratch'))).toEqual([
      `10.10.0.31@tcp:/scratch ${join(state, 'root', 'mnt', 'lustre', 'scratch')} lustre defaults,_netdev 0 0`,
    ]);
  });
});
