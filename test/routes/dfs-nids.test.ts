/**
 * NIDs in requests (issue 31 item 5): a NI belongs to exactly its network (`tcp10` is not
 * `tcp1`), and a host name on an IP network (`io1@tcp0`, which lctl, mount.lustre and
 * mkfs.lustre resolve) is taken by ping, mount, create and import/show_config: strictly, so no
 * shell, option or path character and nothing longer than a DNS name passes.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadFixtureDir, readFixture } from '../../runtime/system/fixture-file';
import { errorOf, issuePaths } from '../helpers/answers';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';

const LCTL = '/usr/sbin/lctl';
const LNETCTL = '/usr/sbin/lnetctl';
const MOUNT = '/usr/bin/mount';
const INSTALL = '/usr/bin/install';
const MKFS = '/usr/sbin/mkfs.lustre';

let t: TestHost;
const argvs = () => t.replay!.calls.map((c) => c.argv);
const post = (path: string, body: unknown) => t.call('POST', `/api/v2/dfs${path}`, { body });
const config = (netType: string, nid: string) => ({
  net: [{ 'net type': netType, 'local NI(s)': [{ nid, status: 'up', interfaces: { '0': 'eth2' } }] }],
});

beforeEach(async () => {
  t = await makeTestHost({ routes: DFS_ROUTES, fixtures: loadFixtureDir(join(repo, 'fixtures', 'dfs', 'mds')) });
});
afterEach(() => t.close());

// labels of 63, 63, 63 and 61 characters: 253, the longest DNS name
const LONGEST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;

describe('a NI belongs to its own network', () => {
  it('show_config and import_config refuse @tcp1 under tcp10 and @tcp10 under tcp1, naming the nid', async () => {
    for (const [netType, nid] of [
      ['tcp10', '10.20.0.11@tcp1'],
      ['tcp1', '10.20.0.11@tcp10'],
      ['o2ib', '10.20.0.11@o2ib10'],
      ['tcp', '10.20.0.11@tcp1'],
      ['tcp2', '10.20.0.11@o2ib2'],
    ]) {
      for (const route of ['/lnet/show_config', '/lnet/import_config']) {
        const r = await post(route, config(netType, nid));
        expect([r.status, issuePaths(r)], `${route} ${netType} ${nid}`).toEqual([
          400,
          ['body.net.0.local NI(s).0.nid'],
        ]);
        expect(JSON.stringify(errorOf(r).issues)).toContain(`${nid} is not on ${netType}`);
      }
    }
    expect(argvs()).toEqual([]);
  });

  it('takes tcp and tcp0 as one network, and the same number under the same LND', async () => {
    for (const [netType, nid] of [
      ['tcp', '10.20.0.11@tcp0'],
      ['tcp0', '10.20.0.11@tcp'],
      ['tcp10', '10.20.0.11@tcp10'],
      ['o2ib1', '10.20.0.11@o2ib1'],
    ]) {
      const r = await post('/lnet/show_config', config(netType, nid));
      expect(r.status, `${netType} ${nid}`).toBe(200);
      expect(r.json).toContain(`    - net type: ${netType}\n`);
    }
  });
});

describe('host names in NIDs', () => {
  it('ping passes io1@tcp0 to lctl as it was given', async () => {
    t.replay!.load([fixture([LCTL, 'ping', 'io1@tcp0'], '12345-0@lo\n12345-10.10.0.21@tcp\n')]);
    const r = await t.call('GET', '/api/v2/dfs/lnet/io1@tcp0/ping');
    expect([r.status, r.json]).toEqual([
      200,
      { warnings: '', raw: '12345-0@lo\n12345-10.10.0.21@tcp\n', parsed: ['0@lo', '10.10.0.21@tcp'] },
    ]);
    expect(argvs()).toEqual([[LCTL, 'ping', 'io1@tcp0']]);
  });

  it('mount takes host names for the MGS nodes (failover, several NIDs of one node)', async () => {
    const dir = join(t.config.paths.dfsClientMountRoot, 'scratch');
    const spec = 'mgs1.cluster.example.org@tcp,mgs1-ib@o2ib1:mgs2@tcp';
    t.replay!.load([
      fixture([INSTALL, '-d', '-m', '0755', '--', dir], ''),
      fixture([MOUNT, '-t', 'lustre', '--', `${spec}:/scratch`, dir], ''),
    ]);
    const r = await post('/fs/mount', { fsName: 'scratch', lnetId: spec });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(argvs().at(-1)).toEqual([MOUNT, '-t', 'lustre', '--', `${spec}:/scratch`, dir]);
  });

  it('create_mdt passes a host-name MGS as --mgsnode', async () => {
    const dir = join(t.config.paths.dfsTargetMountRoot, 'lustrefs-MDT0001');
    const mkfs = [
      MKFS,
      '--mdt',
      '--backfstype=zfs',
      '--fsname=lustrefs',
      '--index=1',
      '--mgsnode=mgs1@tcp',
      '--mgsnode=mgs2@tcp',
      '--',
      'mdt/lustrefs-mdt1',
    ];
    const { stdout } = readFixture(join(repo, 'fixtures/dfs/mds/mkfs-mdt1.yaml'));
    t.replay!.load([
      fixture(mkfs, stdout),
      fixture([INSTALL, '-d', '-m', '0755', '--', dir], ''),
      fixture([MOUNT, '-t', 'lustre', '--', 'mdt/lustrefs-mdt1', dir], ''),
    ]);
    const r = await post('/fs/create_mdt', {
      fsName: 'lustrefs',
      poolName: 'mdt',
      index: '1',
      mgs_node: 'mgs1@tcp:mgs2@tcp',
    });
    expect(argvs().find((a) => a[0] === MKFS)).toEqual(mkfs);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  });

  it('import_config takes a host-name NI on its own network', async () => {
    const file = join(t.config.paths.dfsLnetImportDir, 'lnet-import.yaml');
    t.replay!.load([fixture([LNETCTL, 'import', file], '')]);
    const r = await post('/lnet/import_config', config('tcp1', 'io1@tcp1'));
    expect([r.status, r.json]).toEqual([200, file]);
    expect((await post('/lnet/import_config', config('tcp10', 'io1@tcp1'))).status).toBe(400);
  });

  it('the longest DNS name (253) passes, one more character or a bad label does not', async () => {
    t.replay!.load([fixture([LCTL, 'ping', `${LONGEST}@tcp`], '12345-0@lo\n')]);
    expect((await t.call('GET', `/api/v2/dfs/lnet/${LONGEST}@tcp/ping`)).status).toBe(200);
    const bad = [
      `${LONGEST}e@tcp`, // 254
      `${'a'.repeat(64)}@tcp`, // a label of 64
      'io1@gni', // names resolve on IP networks only
      'io1@lo',
      '1io@tcp', // libcfs reads a leading digit as an address
      '-io1@tcp',
      'io1-@tcp',
      'io_1@tcp',
      'io1.@tcp',
      'io1..x@tcp',
      '.io1@tcp',
      'io1@tcp;id',
      'io$(id)@tcp',
      'io1 @tcp',
      'io1@@tcp',
      'io1@tcp@tcp',
      'io1@eth0',
    ];
    for (const nid of bad) {
      const ping = await t.call('GET', `/api/v2/dfs/lnet/${encodeURIComponent(nid)}/ping`);
      expect([ping.status, issuePaths(ping)[0]], `ping ${nid}`).toEqual([400, 'params.nid']);
      const mount = await post('/fs/mount', { fsName: 'scratch', lnetId: nid });
      expect([mount.status, issuePaths(mount)[0]], `mount ${nid}`).toEqual([400, 'body.lnetId']);
      const create = await post('/fs/create_ost', { fsName: 'x', poolName: 'mdt', index: '0', mgs_node: nid });
      expect([create.status, issuePaths(create)[0]], `create ${nid}`).toEqual([400, 'body.mgs_node']);
    }
    expect(argvs()).toEqual([[LCTL, 'ping', `${LONGEST}@tcp`]]);
  });
});
