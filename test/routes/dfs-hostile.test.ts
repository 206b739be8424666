/**
 * Hostile values in every string field and path parameter of the dfs routes: each is a 400 naming
 * the field, and no command runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestHost, type TestHost } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';
import { errorOf, issuePaths } from '../helpers/answers';

const HOSTILE = [
  '',
  '-rf',
  '--reformat',
  '../etc',
  'a/b',
  'a b',
  'a\nb',
  'a\u0000b',
  '$(id)',
  '`id`',
  'a;b',
  'x'.repeat(300),
  '.hidden',
  '*',
];

const BODIES: Record<string, Record<string, unknown>> = {
  '/dfs/lnet/add': { lnetName: 'tcp1', faceName: 'eth2' },
  '/dfs/lnet/remove': { lnetName: 'tcp1', faceName: 'eth2' },
  '/dfs/fs/verify': { fsName: 'mdt0', poolName: 'pool' },
  '/dfs/fs/mount': { fsName: 'demofs', lnetId: '10.0.0.1@tcp' },
  '/dfs/fs/create_mgs': { poolName: 'pool' },
  '/dfs/fs/create_ost': { fsName: 'demofs', poolName: 'pool', index: '0', mgs_node: '10.0.0.1@tcp' },
  '/dfs/fs/create_mdt': { fsName: 'demofs', poolName: 'pool', index: '0', mgs_node: '10.0.0.1@tcp' },
};
const PARAMS: [string, string][] = [
  ['/api/v2/dfs/device/%s/details', 'device'],
  ['/api/v2/dfs/lnet/%s/ping', 'nid'],
  ['/api/v2/dfs/fs/%s/details', 'filesystem'],
];

let t: TestHost;
beforeAll(async () => {
  t = await makeTestHost({ routes: DFS_ROUTES });
});
afterAll(() => t.close());

describe('hostile input to the dfs routes', () => {
  it('every hostile string in every body field is a 400 naming the field; nothing runs', async () => {
    let n = 0;
    for (const [path, good] of Object.entries(BODIES)) {
      for (const field of Object.keys(good)) {
        for (const v of HOSTILE) {
          const r = await t.call('POST', `/api/v2${path}`, { body: { ...good, [field]: v } });
          expect(r.status, `${path} ${field}=${JSON.stringify(v)}`).toBe(400);
          expect(JSON.stringify(errorOf(r).issues ?? []), `${path} ${field}`).toContain(`body.${field}`);
          n++;
        }
      }
      for (const extra of [{ ...good, extra: 1 }, [], null, 'x'])
        expect((await t.call('POST', `/api/v2${path}`, { body: extra })).status, path).toBe(400);
    }
    expect(n).toBeGreaterThan(200);
    expect(t.replay!.calls).toEqual([]);
  });

  it('every hostile path parameter is a 400; nothing runs', async () => {
    for (const [tpl, name] of PARAMS) {
      for (const v of HOSTILE.filter((x) => x !== '')) {
        const r = await t.call('GET', tpl.replace('%s', encodeURIComponent(v)));
        expect([r.status, issuePaths(r)[0]], `${tpl} ${JSON.stringify(v)}`).toEqual([400, `params.${name}`]);
      }
    }
    expect(t.replay!.calls).toEqual([]);
  });
});
