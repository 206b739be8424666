/**
 * The demo appliance (npm start) is the MGS+MDS node of `demofs` (two OSTs on 10.10.0.21@tcp) and
 * a client of it. Every example of every dfs route answers its status on a FRESH demo, and the
 * answer has the route's response shape; a few answers are checked value for value.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePath } from '../../runtime/demo-examples';
import { makeDemoHost, type TestHost } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';

let d: TestHost;

beforeAll(async () => {
  d = await makeDemoHost({ routes: DFS_ROUTES });
});
afterAll(async () => {
  await d?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await d.call(method, path, { body: method === 'GET' ? undefined : (body ?? {}) });
  return { status: r.status, json: r.json };
}

describe('the demo appliance, dfs area', () => {
  it('has 23 routes, each with at least one example', () => {
    expect(DFS_ROUTES).toHaveLength(23);
    for (const r of DFS_ROUTES) expect(r.meta.examples?.length, r.meta.path).toBeGreaterThan(0);
  });

  for (const r of DFS_ROUTES) {
    for (const ex of r.meta.examples ?? []) {
      it(`${r.meta.method} ${r.meta.path}: ${ex.summary}`, async () => {
        const res = await call(r.meta.method, examplePath(r.meta.path, ex), ex.body);
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
    const fstab = readFileSync(join(d.root, 'etc', 'fstab'), 'utf8');
    expect(fstab.split('\n').filter((l) => l.includes('/scratch'))).toEqual([
      `10.10.0.31@tcp:/scratch ${join(d.root, 'mnt', 'lustre', 'scratch')} lustre defaults,_netdev 0 0`,
    ]);
  });
});
