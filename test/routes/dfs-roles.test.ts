/**
 * Each node answers only what it knows. One test host per role (MGS, MDS, OSS, client), each
 * replaying its own fixture set built from the upstream samples (fixtures/dfs/<role>/, see
 * test/tools/dfs/build-fixtures.ts): the exact argv run, the answers value for value, 404 for what
 * the node does not serve, and the permissions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtureDir } from '../../runtime/system/fixture-file';
import { ReplayBackend } from '../../runtime/system/replay';
import type { ExecOptions, ExecResult } from '../../runtime/system/types';
import { makeTestHost, repo, type TestHost } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';
import { errorOf, detail } from '../helpers/answers';

const roleFixtures = (role: string) => loadFixtureDir(join(repo, 'fixtures', 'dfs', role));
const sample = (p: string) => readFileSync(join(repo, 'fixtures', 'lustre', p), 'utf8');
const LCTL = '/usr/sbin/lctl';
const LNETCTL = '/usr/sbin/lnetctl';

type Json = Record<string, unknown> & { error?: { code: string; message: string; details?: Record<string, unknown> } };
async function get(t: TestHost, path: string, token?: string | null): Promise<{ status: number; json: Json }> {
  const r = await t.call('GET', `/api/v2/dfs${path}`, { token });
  return { status: r.status, json: r.json as Json };
}
const argvs = (t: TestHost) => t.replay!.calls.map((c) => c.argv);

describe('an MGS node', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ routes: DFS_ROUTES, fixtures: roleFixtures('mgs') });
  });
  afterAll(() => t.close());

  it('lists its three devices (lctl dl -t)', async () => {
    const r = await get(t, '/device');
    expect(r.status).toBe(200);
    expect(r.json.parsed).toEqual([
      { status: 'UP', type: 'osd-ldiskfs', name: 'MGS-osd', short_name: 'MGS', uuid: 'MGS-osd_UUID', ref_count: '5' },
      { status: 'UP', type: 'mgs', name: 'MGS', short_name: 'MGS', uuid: 'MGS', ref_count: '13' },
      {
        status: 'UP',
        type: 'mgc',
        name: 'MGC10.14.83.68@tcp',
        short_name: 'MGC',
        uuid: 'e252bf36-5c7e-060d-6017-95f4615aa43f',
        ref_count: '5',
        nid: '10.14.83.68@tcp',
      },
    ]);
    expect(r.json.warnings).toBe('');
    expect(argvs(t).at(-1)).toEqual([LCTL, 'dl', '-t']);
  });

  it('describes its management device: filesystems (multi-line value), backend of MGS-osd', async () => {
    const r = await get(t, '/device/mgs');
    expect(r.json).toEqual({
      uuid: 'MGS',
      filesystems: ['lustrefs', 'testfs'],
      fstype: 'ldiskfs',
      mntdev: '/dev/mapper/vg_pfs-mgs',
    });
    expect(argvs(t).slice(-2)).toEqual([
      [LCTL, 'dl'],
      [LCTL, 'get_param', 'mgs.MGS.filesystems', 'osd-ldiskfs.MGS.fstype', 'osd-ldiskfs.MGS.mntdev'],
    ]);
  });

  it('serves no target and mounts no filesystem as a client', async () => {
    const d = await get(t, '/device/lustrefs-MDT0000/details');
    expect([d.status, errorOf(d).message]).toEqual([
      404,
      'this node does not serve lustrefs-MDT0000 (lctl dl lists no mdt device of that name)',
    ]);
    expect((await get(t, '/fs')).json).toEqual([]);
    expect((await get(t, '/fs/lustrefs/details')).status).toBe(404);
  });

  it('answers the global settings as lnetctl printed them, and 409 while LNet is down', async () => {
    const p = await t.call('GET', '/api/v2/dfs/lnet/properties');
    expect(p.json).toBe(sample('lnetctl-global-show/gmagklaras-global-show-REINDENTED.yaml'));
    const e = await get(t, '/lnet/export_config');
    expect(e.status).toBe(409);
    expect(errorOf(e).message).toBe(
      'cannot export the LNet configuration: cannot get networks: Network is down (LNet is down: GET /dfs/lnet/prepare configures it)',
    );
  });

  it('needs dfs:read to read and dfs:manage to change', async () => {
    const none = await t.token(['kerberos:read']);
    const read = await t.token(['dfs:read']);
    expect((await get(t, '/device', none)).status).toBe(403);
    expect((await get(t, '/device', read)).status).toBe(200);
    const add = await t.call('POST', '/api/v2/dfs/lnet/add', {
      token: read,
      body: { lnetName: 'tcp1', faceName: 'eth2' },
    });
    expect(add.status).toBe(403);
    expect((await get(t, '/lnet/prepare', read)).status).toBe(403);
    expect((await get(t, '/device', null)).status).toBe(401);
  });
});

describe('an MDS node', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ routes: DFS_ROUTES, fixtures: roleFixtures('mds') });
  });
  afterAll(() => t.close());

  it('lists its devices and warns about the inactive osp', async () => {
    const r = await get(t, '/device');
    expect(r.json.warnings).toBe('device 8 lustrefs-OST0001-osc-MDT0000 (osp) is IN');
    const parsed = r.json.parsed as Record<string, unknown>[];
    expect(parsed).toHaveLength(10);
    expect(parsed[4]).toEqual({
      status: 'UP',
      type: 'mdt',
      name: 'lustrefs-MDT0000',
      short_name: 'MDT0000',
      uuid: 'lustrefs-MDT0000_UUID',
      ref_count: '13',
      index: 0,
      filesystem: 'lustrefs',
    });
    expect(parsed[5]).toMatchObject({ type: 'mdd', short_name: 'MDD0000', index: 0, filesystem: 'lustrefs' });
    expect(parsed[7]).toMatchObject({
      type: 'osp',
      name: 'lustrefs-OST0000-osc-MDT0000',
      short_name: 'OST0000',
      index: 0,
    });
  });

  it('details its MDT from osd-zfs, mdt and mdd (HP exporter values)', async () => {
    const r = await get(t, '/device/lustrefs-MDT0000/details');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      devices: {
        'osd-zfs': {
          name: 'lustrefs-MDT0000-osd',
          uuid: 'lustrefs-MDT0000-osd_UUID',
          blocksize: 131072,
          kbytesavail: 2241498368,
          kbytesfree: 2241500416,
          kbytestotal: 2241506560,
          mntdev: 'mdt/mdt',
        },
        mdt: { name: 'lustrefs-MDT0000', uuid: 'lustrefs-MDT0000_UUID', readonly: false },
        mdd: { name: 'lustrefs-MDD0000', uuid: 'lustrefs-MDD0000_UUID' },
      },
      mgs: '172.20.20.1@o2ib',
      name: 'lustrefs-MDT0000',
      filesystem: 'lustrefs',
      type: 'MDT',
      index: 0,
    });
  });

  it('has no MGS, serves no OST, refuses names that are not targets', async () => {
    expect((await get(t, '/device/mgs')).status).toBe(404);
    expect((await get(t, '/device/lustrefs-OST0000/details')).status).toBe(404);
    expect((await get(t, '/device/MGS/details')).status).toBe(400);
    expect((await get(t, '/device/-rf/details')).status).toBe(400);
    expect((await get(t, '/device/a..b/details')).status).toBe(400);
  });

  it('lists o2ib networks with their interfaces (keys not in the spec dropped)', async () => {
    expect((await get(t, '/lnet')).json).toEqual([
      { net_type: 'lo', local_ni_s: [{ nid: '0@lo', status: 'up' }] },
      {
        net_type: 'o2ib',
        local_ni_s: [
          { nid: '172.16.0.24@o2ib', status: 'up', interfaces: { '0': 'ib0' } },
          { nid: '172.16.0.28@o2ib', status: 'up', interfaces: { '0': 'ib1' } },
        ],
      },
    ]);
  });

  it('lists peers plainly and verbosely', async () => {
    const plain = await t.call('GET', '/api/v2/dfs/lnet/peer_list');
    expect(plain.json).toEqual([
      { primary_nid: '10.148.0.8@o2ib', multi_rail: true, peer_ni: [{ nid: '10.148.0.8@o2ib', state: 'NA' }] },
      {
        primary_nid: '10.148.0.20@o2ib',
        multi_rail: true,
        peer_ni: [
          { nid: '10.148.0.20@o2ib', state: 'NA' },
          { nid: '10.148.0.25@o2ib', state: 'NA' },
        ],
      },
    ]);
    const v = await t.call<{ peer_ni: unknown[] }[]>('GET', '/api/v2/dfs/lnet/peer_list?verbose=true');
    expect(t.replay!.calls.at(-1)!.argv).toEqual([LNETCTL, 'peer', 'show', '-v']);
    expect(v.json[0]).toMatchObject({ primary_nid: '0@lo', multi_rail: false });
    expect(v.json[1].peer_ni[0]).toMatchObject({
      nid: '10.73.20.12@tcp',
      max_ni_tx_credits: 8,
      min_tx_credits: 5,
      statistics: { send_count: 1628 },
      health_stats: { 'health value': 1000, error: 7 },
    });
    expect((await t.call('GET', '/api/v2/dfs/lnet/peer_list?verbose=maybe')).status).toBe(400);
  });

  it('answers status and export as lnetctl printed them', async () => {
    expect((await t.call('GET', '/api/v2/dfs/lnet/status')).json).toBe(
      sample('lnetctl-stats-show/lustre-collector-2.14.0_ddn145-stats-show.yaml'),
    );
    expect((await t.call('GET', '/api/v2/dfs/lnet/export_config')).json).toBe(
      sample('lnetctl-export/lustre-collector-export-tcp-node-o2ib-peers.yaml'),
    );
  });

  it('verifies a dataset: pool health from zpool status, space from the listings', async () => {
    const r = await t.call('POST', '/api/v2/dfs/fs/verify', { body: { fsName: 'mdt', poolName: 'mdt' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      result: [
        'pool mdt: DEGRADED, size 6.98T, allocated 452K, free 6.98T, 0% used',
        'devices not online: mdt DEGRADED, raidz1-0 DEGRADED, replacing-0 DEGRADED, 7198113008837021926 UNAVAIL (was /dev/vde1/old)',
        'errors: No known data errors',
        'dataset mdt/mdt: used 96K, available 831M',
      ].join('\n'),
      fsName: 'mdt',
      poolName: 'mdt',
    });
    expect(argvs(t).slice(-3)).toEqual([
      ['/usr/sbin/zpool', 'list', '--', 'mdt'],
      ['/usr/sbin/zpool', 'status', '--', 'mdt'],
      ['/usr/sbin/zfs', 'list', '--', 'mdt/mdt'],
    ]);
    expect((await t.call('POST', '/api/v2/dfs/fs/verify', { body: { fsName: 'x', poolName: 'nopool' } })).status).toBe(
      404,
    );
    const missing = await t.call('POST', '/api/v2/dfs/fs/verify', { body: { fsName: 'nothere', poolName: 'mdt' } });
    expect([missing.status, errorOf(missing).message]).toEqual([404, 'no dataset mdt/nothere (pool mdt is DEGRADED)']);
    for (const body of [
      { fsName: '-x', poolName: 'mdt' },
      { fsName: 'a/b', poolName: 'mdt' },
      { fsName: 'x', poolName: 'mirror' },
      { fsName: 'x', poolName: '1pool' },
      { fsName: 'x' },
    ]) {
      expect((await t.call('POST', '/api/v2/dfs/fs/verify', { body })).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('an OSS node', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ routes: DFS_ROUTES, fixtures: roleFixtures('oss') });
  });
  afterAll(() => t.close());

  it('lists its OST stack', async () => {
    const r = await get(t, '/device');
    expect(
      (r.json.parsed as Record<string, unknown>[]).map(
        (d) => `${d.type} ${d.short_name} ${d.filesystem ?? '-'} ${d.index ?? '-'}`,
      ),
    ).toEqual([
      'osd-ldiskfs OST0000 testfs 0',
      'mgc MGC - -',
      'ost OSS - -',
      'obdfilter OST0000 testfs 0',
      'lwp MDT0000 testfs 0',
    ]);
  });

  it('details its OST from osd-ldiskfs and obdfilter', async () => {
    const r = await get(t, '/device/testfs-OST0000/details');
    expect(r.json).toEqual({
      devices: {
        'osd-ldiskfs': {
          name: 'testfs-OST0000-osd',
          uuid: 'testfs-OST0000-osd_UUID',
          blocksize: 4096,
          kbytesavail: 4037288,
          kbytesfree: 4106100,
          kbytestotal: 4108388,
          mntdev: '/dev/mapper/ost_pfs_0',
        },
        obdfilter: { name: 'testfs-OST0000', uuid: 'testfs-OST0000_UUID' },
      },
      mgs: '10.14.83.68@tcp',
      name: 'testfs-OST0000',
      filesystem: 'testfs',
      type: 'OST',
      index: 0,
    });
  });

  it('has no MGS, no MDT and no client mount', async () => {
    expect((await get(t, '/device/mgs')).status).toBe(404);
    expect((await get(t, '/device/testfs-MDT0000/details')).status).toBe(404);
    expect((await get(t, '/fs')).json).toEqual([]);
  });

  it('pings: the NIDs of a live peer; the failure in warnings for a dead one', async () => {
    expect((await get(t, '/lnet/192.168.3.105@tcp/ping')).json).toEqual({
      warnings: '',
      raw: sample('lctl-ping/cnloh-exa-client-ping-server-with-2-nids.txt'),
      parsed: ['0@lo', '192.168.3.105@tcp', '192.168.3.109@tcp'],
    });
    const dead = await get(t, '/lnet/192.168.14.121@tcp/ping');
    expect([dead.status, dead.json.warnings, dead.json.parsed]).toEqual([
      200,
      'failed to ping 192.168.14.121@tcp: Input/output error',
      [],
    ]);
    expect(argvs(t).at(-1)).toEqual([LCTL, 'ping', '192.168.14.121@tcp']);
    // eth0@tcp would be a host name NID (io1@tcp0 is one); eth_0 is no host name
    for (const bad of ['10.0.0.256@tcp', '10.0.0.1', 'eth_0@tcp', 'eth0@gni', '-1@tcp', '1@lo', '10.0.0.1@tcp@tcp']) {
      expect((await get(t, `/lnet/${encodeURIComponent(bad)}/ping`)).status, bad).toBe(400);
    }
  });
});

/** Replay, except that `lfs df` of one mount point hangs: the command is stopped at its limit. */
class HangingDf extends ReplayBackend {
  constructor(private readonly hangOn: string) {
    super(roleFixtures('client'));
  }
  override async exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    if (argv[1] === 'df' && argv.at(-1) === this.hangOn) {
      this.calls.push({ argv });
      expect(opts.timeoutMs).toBe(1234);
      return {
        code: -1,
        signal: 'SIGKILL',
        stdout: sample('lfs-df/gmagklaras-lfs-df-h-HANGS-oss-down.txt'),
        stderr: '',
        timedOut: true,
        truncated: false,
        durationMs: 1234,
      };
    }
    return super.exec(argv, opts);
  }
}

describe('a client node (4 filesystems, NERSC)', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ routes: DFS_ROUTES, fixtures: roleFixtures('client') });
  });
  afterAll(() => t.close());

  it('answers one result per client mount, rows with the server NIDs of lctl dl -t', async () => {
    const r = await t.call('GET', '/api/v2/dfs/fs');
    expect(r.status).toBe(200);
    const all = r.json as { raw: string; warnings: string; parsed: Record<string, unknown>[] }[];
    expect(all.map((x) => x.parsed.at(-1)!.filesystem)).toEqual(['snx11035', 'snx11036', 'snx11168', 'snx11025']);
    expect(all[0].parsed).toHaveLength(26);
    expect(all[0].parsed[0]).toEqual({
      uuid: 'snx11035-MDT0000_UUID',
      '1kblocks': 2255453580,
      used: 115237564,
      available: 2106016404,
      use: 5,
      mounted: '/scratch2',
      filesystem: 'snx11035',
      name: 'snx11035-MDT0000',
      mgs: '10.100.101.3@o2ib2',
      index: 0,
      type: 'MDT',
      nid: '10.100.101.4@o2ib2',
    });
    expect(all[0].parsed[21]).toMatchObject({ uuid: 'snx11035-OST0014_UUID', index: 20, nid: '10.100.101.25@o2ib2' });
    expect(all[0].parsed[25]).toEqual({
      uuid: 'filesystem_summary',
      '1kblocks': 2178423632448,
      used: 1590005655436,
      available: 565502107932,
      use: 74,
      mounted: '/scratch2',
      filesystem: 'snx11035',
      name: 'filesystem_summary',
      mgs: '10.100.101.3@o2ib2',
    });
    expect(all.every((x) => x.warnings === '')).toBe(true);
    expect(argvs(t).filter((a) => a[1] === 'df')).toEqual(
      ['/scratch2', '/scratch3', '/global/cscratch1', '/scratch1'].map((d) => ['/usr/bin/lfs', 'df', '--lazy', d]),
    );
  });

  it('answers one filesystem by name', async () => {
    const r = await t.call<{ parsed: { type?: string }[] }>('GET', '/api/v2/dfs/fs/snx11168/details');
    expect(r.json.parsed.filter((x: { type?: string }) => x.type === 'MDT')).toHaveLength(5);
    expect((await t.call('GET', '/api/v2/dfs/fs/bad-name/details')).status).toBe(400);
  });

  it('answers 504 when lfs df hangs (an OSS is down), with the partial output and the filesystems done', async () => {
    const h = await makeTestHost({
      routes: DFS_ROUTES,
      backend: new HangingDf('/scratch3'),
      config: { settings: { dfs: { timeouts: { lfsDfMs: 1234 } } } },
    });
    try {
      const r = await h.call('GET', '/api/v2/dfs/fs');
      expect(r.status).toBe(504);
      expect(errorOf(r).code).toBe('command_timeout');
      expect(errorOf(r).message).toBe('lfs did not finish within 1234 ms');
      expect(detail(r, 'warnings')).toBe(sample('lfs-df/gmagklaras-lfs-df-h-HANGS-oss-down.txt'));
      expect(detail(r, 'command')).toEqual(['/usr/bin/lfs', 'df', '--lazy', '/scratch3']);
      expect(
        (detail(r, 'collected') as { parsed: { filesystem: string }[] }[]).map((c) => c.parsed[0].filesystem),
      ).toEqual(['snx11035']);
    } finally {
      await h.close();
    }
  });
});
