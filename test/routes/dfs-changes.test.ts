/**
 * The dfs changes on a test host (MDS fixtures + constructed outputs): exact argv, files written
 * (bytes and modes), events, the refusals (400 per field, 404, 409) and the roll-backs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadFixtureDir } from '../../runtime/system/fixture-file';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import { DFS_ROUTES } from './dfs-helpers';
import { errorOf, issuePaths } from '../helpers/answers';

const LNETCTL = '/usr/sbin/lnetctl';
const MOUNT = '/usr/bin/mount';
const INSTALL = '/usr/bin/install';
const MKFS = '/usr/sbin/mkfs.lustre';
const ok = (argv: string[], stdout = '') => fixture(argv, stdout);

let t: TestHost;
const p = (key: string) => t.config.paths[key];
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map((e) =>
    JSON.parse(e.data),
  );
const argvs = () => t.replay!.calls.map((c) => c.argv);
const post = <T = unknown>(path: string, body: unknown, token?: string) =>
  t.call<T>('POST', `/api/v2/dfs${path}`, { body, token });

beforeEach(async () => {
  t = await makeTestHost({ routes: DFS_ROUTES, fixtures: loadFixtureDir(join(repo, 'fixtures', 'dfs', 'mds')) });
});
afterEach(() => t.close());

describe('LNet changes', () => {
  it('adds a network: lnetctl net add, then net show (every network, as remove answers); event dfs.lnet.added', async () => {
    const all =
      'net:\n    - net type: lo\n      local NI(s):\n        - nid: 0@lo\n          status: up\n    - net type: o2ib1\n      local NI(s):\n        - nid: 10.0.1.5@o2ib1\n          status: up\n';
    t.replay!.load([ok([LNETCTL, 'net', 'add', '--net', 'o2ib1', '--if', 'ib2']), ok([LNETCTL, 'net', 'show'], all)]);
    const r = await post('/lnet/add', { lnetName: 'o2ib1', faceName: 'ib2' });
    expect(r.json).toEqual({ result: all, lnetName: 'o2ib1', faceName: 'ib2' });
    expect(argvs()).toEqual([
      [LNETCTL, 'net', 'add', '--net', 'o2ib1', '--if', 'ib2'],
      [LNETCTL, 'net', 'show'],
    ]);
    expect(events('dfs.lnet.added')).toEqual([{ lnetName: 'o2ib1', faceName: 'ib2' }]);
  });

  it('add and remove answer the same network information: the whole net show after the change', async () => {
    const before = 'net:\n    - net type: lo\n      local NI(s):\n        - nid: 0@lo\n          status: up\n';
    const withTcp1 = `${before}    - net type: tcp1\n      local NI(s):\n        - nid: 10.20.0.11@tcp1\n          status: up\n`;
    t.replay!.load([
      ok([LNETCTL, 'net', 'add', '--net', 'tcp1', '--if', 'eth2']),
      ok([LNETCTL, 'net', 'show'], withTcp1),
    ]);
    const added = await post<{ result: string }>('/lnet/add', { lnetName: 'tcp1', faceName: 'eth2' });
    t.replay!.load([
      ok([LNETCTL, 'net', 'del', '--net', 'tcp1', '--if', 'eth2']),
      ok([LNETCTL, 'net', 'show'], before),
    ]);
    const removed = await post<{ result: string }>('/lnet/remove', { lnetName: 'tcp1', faceName: 'eth2' });
    expect([added.json.result, removed.json.result]).toEqual([withTcp1, before]);
    const shows = argvs().filter((a) => a[1] === 'net' && a[2] === 'show');
    expect(shows).toEqual([
      [LNETCTL, 'net', 'show'],
      [LNETCTL, 'net', 'show'],
    ]);
  });

  it('maps lnetctl errnos: EEXIST 409, ENODEV 404, LNet down 409; other errors 502', async () => {
    const err = (errno: number, descr: string) =>
      `add:\n    - net:\n          errno: ${errno}\n          descr: "${descr}"\n`;
    const cases: [string, number, string, number][] = [
      ['eth1', -17, 'cannot add network: File exists', 409],
      ['eth9', -19, 'cannot add network: No such device', 404],
      ['eth8', -100, 'cannot add network: Network is down', 409],
      ['eth7', -12, 'cannot add network: Cannot allocate memory', 502],
    ];
    for (const [iface, errno, descr] of cases)
      t.replay!.load([
        fixture([LNETCTL, 'net', 'add', '--net', 'tcp', '--if', iface], '', { code: 1, stderr: err(errno, descr) }),
      ]);
    for (const [iface, , descr, status] of cases) {
      const r = await post('/lnet/add', { lnetName: 'tcp', faceName: iface });
      expect([r.status, errorOf(r).message]).toEqual([
        status,
        `cannot add tcp on ${iface}: ${descr}${status === 409 && iface === 'eth8' ? ' (LNet is down: GET /dfs/lnet/prepare configures it)' : ''}${status === 502 ? ' (errno -12)' : ''}`,
      ]);
    }
    expect(events('dfs.lnet.added')).toEqual([]);
  });

  it('an error block on stdout with exit 0 (some lnetctl releases) is still an error', async () => {
    t.replay!.load([
      fixture(
        [LNETCTL, 'net', 'show'],
        'show:\n    - net:\n          errno: -100\n          descr: "cannot get networks: Network is down"\n',
      ),
    ]);
    const r = await t.call('GET', '/api/v2/dfs/lnet');
    expect([r.status, errorOf(r).details]).toEqual([409, { command: [LNETCTL, 'net', 'show'], errno: -100 }]);
  });

  it('refuses bad names field by field, before running anything', async () => {
    for (const body of [
      { lnetName: 'eth0', faceName: 'eth0' },
      { lnetName: 'tcp1', faceName: '../x' },
      { lnetName: 'tcp1', faceName: '-eth0' },
      { lnetName: 'lo', faceName: 'lo' },
      { lnetName: 'tcp1' },
      { lnetName: 'tcp1', faceName: 'eth1', extra: 1 },
    ]) {
      const r = await post('/lnet/add', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(issuePaths(await post('/lnet/remove', { lnetName: 'tcp 1', faceName: 'eth1' }))[0]).toBe('body.lnetName');
    expect(argvs()).toEqual([]);
  });

  it('removes a network (POST): lnetctl net del, then net show; 404 when there is none', async () => {
    t.replay!.load([ok([LNETCTL, 'net', 'del', '--net', 'o2ib', '--if', 'ib1'])]);
    const r = await post<{ lnetName: string }>('/lnet/remove', { lnetName: 'o2ib', faceName: 'ib1' });
    expect(r.status).toBe(200);
    expect(r.json.lnetName).toBe('o2ib');
    expect(argvs()).toEqual([
      [LNETCTL, 'net', 'del', '--net', 'o2ib', '--if', 'ib1'],
      [LNETCTL, 'net', 'show'],
    ]);
    expect(events('dfs.lnet.removed')).toEqual([{ lnetName: 'o2ib', faceName: 'ib1' }]);
    t.replay!.load([
      fixture([LNETCTL, 'net', 'del', '--net', 'tcp5', '--if', 'eth5'], '', {
        code: 1,
        stderr:
          'del:\n    - net:\n          errno: -2\n          descr: "cannot delete network: No such file or directory"\n',
      }),
    ]);
    expect((await post('/lnet/remove', { lnetName: 'tcp5', faceName: 'eth5' })).status).toBe(404);
    expect((await t.call('GET', '/api/v2/dfs/lnet/remove')).status).toBe(405);
  });

  const CONFIG = {
    net: [
      {
        'net type': 'tcp1',
        'local NI(s)': [
          {
            nid: '10.20.0.11@tcp1',
            status: 'up',
            interfaces: { '1': 'eth3', '0': 'eth2' },
            tunables: { peer_timeout: 180, credits: 256 },
            'lnd tunables': null,
            'dev cpt': -1,
            CPT: '[0,1]',
          },
        ],
      },
    ],
  };
  const YAML =
    'net:\n    - net type: tcp1\n      local NI(s):\n          - nid: 10.20.0.11@tcp1\n            status: up\n            interfaces:\n                0: eth2\n                1: eth3\n            tunables:\n                peer_timeout: 180\n                credits: 256\n            lnd tunables:\n            dev cpt: -1\n            CPT: "[0,1]"\n';

  it('show_config renders the YAML (keys with spaces, integer interface indices) and runs nothing', async () => {
    const r = await post('/lnet/show_config', CONFIG);
    expect(r.json).toBe(YAML);
    expect(argvs()).toEqual([]);
  });

  it('import_config writes a temporary file (0600) lnetctl imports, removes it, answers its path', async () => {
    const file = join(p('dfsLnetImportDir'), 'lnet-import.yaml');
    let seen: { text: string; mode: number } | null = null;
    t.replay!.load([ok([LNETCTL, 'import', file])]);
    const replay = t.replay!;
    const exec = replay.exec.bind(replay);
    replay.exec = (argv, opts) => {
      // what lnetctl reads, while it reads it
      if (argv[1] === 'import') seen = { text: readFileSync(file, 'utf8'), mode: statSync(file).mode & 0o777 };
      return exec(argv, opts);
    };
    const r = await post('/lnet/import_config', CONFIG);
    expect([r.status, r.json]).toEqual([200, file]);
    expect(seen).toEqual({ text: YAML, mode: 0o600 });
    expect(argvs()).toEqual([[LNETCTL, 'import', file]]);
    expect(readdirSync(p('dfsLnetImportDir'))).toEqual([]);
    expect(events('dfs.lnet.config_imported')).toEqual([{}]);
  });

  it('import_config: a refused import leaves no file behind either, and an earlier file is not put back', async () => {
    const file = join(p('dfsLnetImportDir'), 'lnet-import.yaml');
    mkdirSync(p('dfsLnetImportDir'), { recursive: true });
    writeFileSync(file, 'left by a killed host\n');
    t.replay!.load([
      fixture([LNETCTL, 'import', file], '', {
        code: 1,
        stderr: 'import:\n    - net:\n          errno: -22\n          descr: "cannot add network: Invalid argument"\n',
      }),
    ]);
    const r = await post('/lnet/import_config', CONFIG);
    expect([r.status, errorOf(r).message]).toEqual([
      400,
      'lnetctl import refused the configuration: cannot add network: Invalid argument',
    ]);
    expect(readdirSync(p('dfsLnetImportDir'))).toEqual([]);
    expect(events('dfs.lnet.config_imported')).toEqual([]);
  });

  it('import_config refuses what is not an LNet configuration', async () => {
    const ni = CONFIG.net[0]['local NI(s)'][0];
    const bad = [
      { net: [] },
      { net: [{ 'net type': 'eth0', 'local NI(s)': [ni] }] },
      { net: [{ 'net type': 'tcp1', 'local NI(s)': [{ ...ni, nid: '10.20.0.300@tcp1' }] }] },
      { net: [{ 'net type': 'tcp1', 'local NI(s)': [{ ...ni, CPT: '[0,1]; rm -rf /' }] }] },
      { net: [{ 'net type': 'tcp1', 'local NI(s)': [{ ...ni, interfaces: { x: 'eth2' } }] }] },
      { net: [{ 'net type': 'tcp1', 'local NI(s)': [{ ...ni, 'bogus key': 1 }] }] },
      { net: [{ 'net type': 'tcp1', 'local NI(s)': [{ ...ni, nid: '10.20.0.11@o2ib1' }] }] },
    ];
    for (const body of bad) expect((await post('/lnet/import_config', body)).status, JSON.stringify(body)).toBe(400);
    expect(argvs()).toEqual([]);
  });

  it('prepare runs lnetctl lnet configure --all and answers an empty string; HEAD is refused (side effect)', async () => {
    t.replay!.load([ok([LNETCTL, 'lnet', 'configure', '--all'])]);
    const r = await t.call('GET', '/api/v2/dfs/lnet/prepare');
    expect([r.status, r.json]).toEqual([200, '']);
    expect((await t.call('HEAD', '/api/v2/dfs/lnet/prepare')).status).toBe(405);
  });
});

describe('mounting a filesystem as a client', () => {
  const seedFstab = (text: string) => {
    mkdirSync(dirname(p('fstab')), { recursive: true });
    writeFileSync(p('fstab'), text);
  };

  it('mounts <lnetId>:/<fsName> at <clientMountRoot>/<fsName> and appends fstab when persist', async () => {
    seedFstab('UUID=1 / ext4 defaults 0 1\n');
    const dir = join(p('dfsClientMountRoot'), 'scratch');
    t.replay!.load([
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', '10.0.0.1@tcp:10.0.0.2@tcp:/scratch', dir]),
    ]);
    const r = await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp:10.0.0.2@tcp', persist: true });
    expect(r.json).toEqual({
      result: `Mounted 10.0.0.1@tcp:10.0.0.2@tcp:/scratch on ${dir} and added it to ${p('fstab')}`,
      fsName: 'scratch',
      lnetId: '10.0.0.1@tcp:10.0.0.2@tcp',
      mountLocation: dir,
    });
    expect(readFileSync(p('fstab'), 'utf8')).toBe(
      `UUID=1 / ext4 defaults 0 1\n10.0.0.1@tcp:10.0.0.2@tcp:/scratch ${dir} lustre defaults,_netdev 0 0\n`,
    );
    expect(argvs()).toEqual([
      [MOUNT, '-t', 'lustre'],
      [INSTALL, '-d', '-m', '0755', '--', dir],
      [MOUNT, '-t', 'lustre', '--', '10.0.0.1@tcp:10.0.0.2@tcp:/scratch', dir],
    ]);
    expect(events('dfs.fs.mounted')).toEqual([
      { fsName: 'scratch', lnetId: '10.0.0.1@tcp:10.0.0.2@tcp', persist: true },
    ]);
  });

  it('does not touch fstab without persist; a foreign fstab line for the mount point undoes the mount (409)', async () => {
    const dir = join(p('dfsClientMountRoot'), 'scratch');
    seedFstab(`/dev/sdz ${dir} xfs defaults 0 2\n`);
    t.replay!.load([
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', '10.0.0.1@tcp:/scratch', dir]),
      ok(['/usr/bin/umount', '--', dir]),
    ]);
    expect((await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp' })).status).toBe(200);
    expect(readFileSync(p('fstab'), 'utf8')).toBe(`/dev/sdz ${dir} xfs defaults 0 2\n`);
    const r = await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp', persist: true });
    expect(r.status).toBe(409);
    expect(argvs().at(-1)).toEqual(['/usr/bin/umount', '--', dir]);
    expect(readFileSync(p('fstab'), 'utf8')).toBe(`/dev/sdz ${dir} xfs defaults 0 2\n`);
    expect(events('dfs.fs.mounted')).toHaveLength(1);
  });

  it('reads fstab as fstab(5): its own entry with a comment is left alone; a line it cannot read undoes the mount (502)', async () => {
    const dir = join(p('dfsClientMountRoot'), 'scratch');
    const mine = `10.0.0.1@tcp:/scratch ${dir} lustre defaults,_netdev 0 0 # added by hand\n`;
    seedFstab(mine);
    t.replay!.load([
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', '10.0.0.1@tcp:/scratch', dir]),
      ok(['/usr/bin/umount', '--', dir]),
    ]);
    const r = await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp', persist: true });
    expect(r.status).toBe(200);
    expect(readFileSync(p('fstab'), 'utf8')).toBe(mine);
    seedFstab('/dev/sdz /srv\n');
    const bad = await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp', persist: true });
    expect(bad.status).toBe(502);
    expect(argvs().at(-1)).toEqual(['/usr/bin/umount', '--', dir]);
    expect(readFileSync(p('fstab'), 'utf8')).toBe('/dev/sdz /srv\n');
  });

  it('refuses a filesystem mounted already (409) and bad names or NIDs (400)', async () => {
    t.replay!.load([
      fixture([MOUNT, '-t', 'lustre'], '10.0.0.1@tcp:/scratch on /mnt/lustre/scratch type lustre (rw)\n'),
    ]);
    expect((await post('/fs/mount', { fsName: 'scratch', lnetId: '10.0.0.1@tcp' })).status).toBe(409);
    for (const body of [
      { fsName: 'toolongname', lnetId: '10.0.0.1@tcp' },
      { fsName: 'a/b', lnetId: '10.0.0.1@tcp' },
      { fsName: 'x', lnetId: '10.0.0.1' },
      { fsName: 'x', lnetId: '10.0.0.1@tcp:/evil' },
      { fsName: 'x', lnetId: '10.0.0.1@tcp', persist: 'yes' },
    ]) {
      expect((await post('/fs/mount', body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('creating targets on ZFS', () => {
  it('create_mdt: mkfs.lustre --mdt with the pool dataset, mounts it, fstab when persist, event', async () => {
    const dir = join(p('dfsTargetMountRoot'), 'lustrefs-MDT0001');
    t.replay!.load([
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', 'mdt/lustrefs-mdt1', dir]),
    ]);
    const r = await post<{ result: string }>('/fs/create_mdt', {
      fsName: 'lustrefs',
      poolName: 'mdt',
      index: '1',
      mgs_node: '172.20.20.1@o2ib',
      persist: true,
    });
    expect(r.status).toBe(200);
    expect(r.json.result).toMatch(/^\n {3}Permanent disk data:\nTarget: {5}lustrefs:MDT0001\n/);
    expect(argvs()).toEqual([
      ['/usr/sbin/zpool', 'list', '--', 'mdt'],
      ['/usr/sbin/lctl', 'dl'],
      [
        MKFS,
        '--mdt',
        '--backfstype=zfs',
        '--fsname=lustrefs',
        '--index=1',
        '--mgsnode=172.20.20.1@o2ib',
        '--',
        'mdt/lustrefs-mdt1',
      ],
      [INSTALL, '-d', '-m', '0755', '--', dir],
      [MOUNT, '-t', 'lustre', '--', 'mdt/lustrefs-mdt1', dir],
    ]);
    expect(readFileSync(p('fstab'), 'utf8')).toBe(`mdt/lustrefs-mdt1 ${dir} lustre defaults,_netdev 0 0\n`);
    expect(events('dfs.fs.created')).toEqual([{ role: 'mdt', fsName: 'lustrefs', poolName: 'mdt' }]);
  });

  it('create_ost: one --mgsnode per failover MGS node; no --reformat ever', async () => {
    const dir = join(p('dfsTargetMountRoot'), 'lustrefs-OST000a');
    const mkfs = [
      MKFS,
      '--ost',
      '--backfstype=zfs',
      '--fsname=lustrefs',
      '--index=10',
      '--mgsnode=10.0.0.1@tcp,10.1.0.1@o2ib',
      '--mgsnode=10.0.0.2@tcp',
      '--',
      'mdt/lustrefs-ost10',
    ];
    const out = readFileSync(join(repo, 'fixtures/lustre/mkfs.lustre/cn-notes-2.15.1-mkfs-zfs-ost-o2ib.txt'), 'utf8')
      .replace(/lustre1:OST0000/g, 'lustrefs:OST000a')
      .replace('Index:      0', 'Index:      10');
    t.replay!.load([
      ok(mkfs, out),
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', 'mdt/lustrefs-ost10', dir]),
    ]);
    const r = await post('/fs/create_ost', {
      fsName: 'lustrefs',
      poolName: 'mdt',
      index: '10',
      mgs_node: '10.0.0.1@tcp,10.1.0.1@o2ib:10.0.0.2@tcp',
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(argvs()[2]).toEqual(mkfs);
    expect(existsSync(p('fstab'))).toBe(false);
  });

  it('refuses an existing target (409), a missing pool (404), mkfs.lustre refusing an existing dataset (409), bad input (400)', async () => {
    expect(
      (await post('/fs/create_mdt', { fsName: 'lustrefs', poolName: 'mdt', index: '0', mgs_node: '172.20.20.1@o2ib' }))
        .status,
    ).toBe(409);
    expect(
      (
        await post('/fs/create_mdt', {
          fsName: 'lustrefs',
          poolName: 'nopool',
          index: '1',
          mgs_node: '172.20.20.1@o2ib',
        })
      ).status,
    ).toBe(404);
    t.replay!.load([
      fixture(
        [
          MKFS,
          '--mdt',
          '--backfstype=zfs',
          '--fsname=lustrefs',
          '--index=2',
          '--mgsnode=172.20.20.1@o2ib',
          '--',
          'mdt/lustrefs-mdt2',
        ],
        '',
        { code: 1, stderr: 'mkfs.lustre FATAL: mdt/lustrefs-mdt2 is already formatted; use --reformat\n' },
      ),
    ]);
    expect(
      (await post('/fs/create_mdt', { fsName: 'lustrefs', poolName: 'mdt', index: '2', mgs_node: '172.20.20.1@o2ib' }))
        .status,
    ).toBe(409);
    for (const body of [
      { fsName: 'lustrefs', poolName: 'mdt', index: '01', mgs_node: '172.20.20.1@o2ib' },
      { fsName: 'lustrefs', poolName: 'mdt', index: 1, mgs_node: '172.20.20.1@o2ib' },
      { fsName: 'lustrefs', poolName: 'mdt', index: '70000', mgs_node: '172.20.20.1@o2ib' },
      { fsName: 'lustre-fs', poolName: 'mdt', index: '1', mgs_node: '172.20.20.1@o2ib' },
      { fsName: 'lustrefs', poolName: 'raidz', index: '1', mgs_node: '172.20.20.1@o2ib' },
      { fsName: 'lustrefs', poolName: 'mdt', index: '1', mgs_node: '--reformat' },
      { fsName: 'lustrefs', poolName: 'mdt', index: '1', mgs_node: '172.20.20.1@o2ib', reformat: true },
    ]) {
      expect((await post('/fs/create_mdt', body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('create_mgs: refused where an MGS runs unless reformat; without reformat no --reformat', async () => {
    // the recorded MGS is mounted at /lustre/MGS, outside the test's private target root
    const h = await makeTestHost({
      routes: DFS_ROUTES,
      fixtures: loadFixtureDir(join(repo, 'fixtures', 'dfs', 'mgs')),
      config: { settings: { dfs: { extraMountRoots: ['/lustre'] } } },
    });
    try {
      h.replay!.load([
        fixture(['/usr/sbin/zpool', 'list', '--', 'mgspool'], 'NAME SIZE ALLOC FREE HEALTH\nmgspool 1G 1M 1G ONLINE\n'),
      ]);
      const r = await h.call('POST', '/api/v2/dfs/fs/create_mgs', { body: { poolName: 'mgspool' } });
      expect([r.status, errorOf(r).message]).toEqual([
        409,
        'this node already runs a management server; reformat: true replaces it and every device relying on it',
      ]);
    } finally {
      await h.close();
    }
    const dir = join(p('dfsTargetMountRoot'), 'MGS');
    const mkfsOut = readFileSync(join(repo, 'fixtures/lustre/mkfs.lustre/gmagklaras-mkfs-ldiskfs-mgs.txt'), 'utf8');
    t.replay!.load([
      ok([MKFS, '--mgs', '--backfstype=zfs', '--', 'mdt/mgs'], mkfsOut),
      ok([INSTALL, '-d', '-m', '0755', '--', dir]),
      ok([MOUNT, '-t', 'lustre', '--', 'mdt/mgs', dir]),
    ]);
    const ok2 = await post('/fs/create_mgs', { poolName: 'mdt', persist: false });
    expect(ok2.json).toEqual({ result: mkfsOut, poolName: 'mdt' });
    expect(argvs().map((a) => a[0].split('/').pop())).toEqual([
      'zpool',
      'lctl',
      'mount',
      'mkfs.lustre',
      'install',
      'mount',
    ]);
    expect(events('dfs.fs.created')).toEqual([{ role: 'mgs', fsName: null, poolName: 'mdt' }]);
  });
});

describe('reformatting the MGT', () => {
  it('stops the running MGS (umount of its listed mount point), passes --reformat, starts it again', async () => {
    // the recorded MGS is mounted at /lustre/MGS, outside the test's private target root
    const h = await makeTestHost({
      routes: DFS_ROUTES,
      fixtures: loadFixtureDir(join(repo, 'fixtures', 'dfs', 'mgs')),
      config: { settings: { dfs: { extraMountRoots: ['/lustre'] } } },
    });
    try {
      const dir = join(h.config.paths.dfsTargetMountRoot, 'MGS');
      const mkfs = [MKFS, '--mgs', '--backfstype=zfs', '--reformat', '--', 'mgspool/mgs'];
      const out = readFileSync(join(repo, 'fixtures/demo/dfs/mkfs-mgs-reformat.yaml'), 'utf8');
      const stdout = (await import('yaml')).parse(out).stdout as string;
      h.replay!.load([
        fixture(['/usr/sbin/zpool', 'list', '--', 'mgspool'], 'NAME SIZE ALLOC FREE HEALTH\nmgspool 1G 1M 1G ONLINE\n'),
        fixture(
          [MOUNT, '-t', 'lustre'],
          'mgspool/mgs on /lustre/MGS type lustre (ro,svname=MGS,nosvc,mgs,osd=osd-zfs)\n',
        ),
        ok(['/usr/bin/umount', '--', '/lustre/MGS']),
        ok(mkfs, stdout),
        ok([INSTALL, '-d', '-m', '0755', '--', dir]),
        ok([MOUNT, '-t', 'lustre', '--', 'mgspool/mgs', dir]),
      ]);
      const r = await h.call('POST', '/api/v2/dfs/fs/create_mgs', { body: { poolName: 'mgspool', reformat: true } });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(h.replay!.calls.map((c) => c.argv)).toEqual([
        ['/usr/sbin/zpool', 'list', '--', 'mgspool'],
        ['/usr/sbin/lctl', 'dl'],
        [MOUNT, '-t', 'lustre'],
        ['/usr/bin/umount', '--', '/lustre/MGS'],
        mkfs,
        [INSTALL, '-d', '-m', '0755', '--', dir],
        [MOUNT, '-t', 'lustre', '--', 'mgspool/mgs', dir],
      ]);
      const no = await h.call('POST', '/api/v2/dfs/fs/create_mgs', { body: { poolName: 'mgspool', reformat: false } });
      expect(no.status).toBe(409);
    } finally {
      await h.close();
    }
  });
});

describe('FLR synchronisation configuration', () => {
  const body = {
    max_history_size: 500,
    run_interval: 60,
    directories: ['/mnt/lustre/demofs/a/', '/mnt/lustre//demofs/b'],
  };
  const SYSTEMCTL = '/usr/bin/systemctl';
  const loadState = (unit: string, state: string) =>
    fixture([SYSTEMCTL, 'show', '--property=LoadState', '--value', '--', unit], `${state}\n`);

  it('404 before one is written; update checks the unit, writes JSON atomically, restarts it, get reads it back', async () => {
    expect((await t.call('GET', '/api/v2/dfs/flr/get')).status).toBe(404);
    t.replay!.load([
      loadState('lustre-flr-sync.service', 'loaded'),
      ok([SYSTEMCTL, 'restart', '--', 'lustre-flr-sync.service']),
    ]);
    const r = await post('/flr/update', body);
    const want = {
      max_history_size: 500,
      run_interval: 60,
      directories: ['/mnt/lustre/demofs/a', '/mnt/lustre/demofs/b'],
    };
    expect(r.json).toEqual(want);
    expect(readFileSync(p('dfsFlrConfig'), 'utf8')).toBe(`${JSON.stringify(want, null, 2)}\n`);
    expect(argvs()).toEqual([
      [SYSTEMCTL, 'show', '--property=LoadState', '--value', '--', 'lustre-flr-sync.service'],
      [SYSTEMCTL, 'restart', '--', 'lustre-flr-sync.service'],
    ]);
    expect(events('dfs.flr.updated')).toEqual([{ maxHistorySize: 500, runInterval: 60, directories: 2 }]);
    expect((await t.call('GET', '/api/v2/dfs/flr/get')).json).toEqual(want);
  });

  it('a unit systemd does not know is a 501 naming settings.dfs.flrService; nothing is written or restarted', async () => {
    mkdirSync(dirname(p('dfsFlrConfig')), { recursive: true });
    const before = '{"max_history_size":1,"run_interval":2,"directories":["/mnt/lustre/x"]}\n';
    writeFileSync(p('dfsFlrConfig'), before);
    t.replay!.load([loadState('lustre-flr-sync.service', 'not-found')]);
    const r = await post('/flr/update', body);
    expect([r.status, errorOf(r).code, errorOf(r).message, errorOf(r).details]).toEqual([
      501,
      'not_implemented',
      'the FLR synchronisation service lustre-flr-sync.service does not exist on this node: install the unit that reads paths.dfsFlrConfig, or name it in settings.dfs.flrService',
      { setting: 'settings.dfs.flrService', unit: 'lustre-flr-sync.service', configPath: 'paths.dfsFlrConfig' },
    ]);
    expect(argvs()).toEqual([[SYSTEMCTL, 'show', '--property=LoadState', '--value', '--', 'lustre-flr-sync.service']]);
    expect(readFileSync(p('dfsFlrConfig'), 'utf8')).toBe(before);
    expect(readdirSync(dirname(p('dfsFlrConfig')))).toEqual([basename(p('dfsFlrConfig'))]);
    expect(events('dfs.flr.updated')).toEqual([]);
  });

  it('a unit gone by the restart (exit 5, Unit … not found) is a 501 too, with the previous file put back', async () => {
    mkdirSync(dirname(p('dfsFlrConfig')), { recursive: true });
    const before = '{"max_history_size":1,"run_interval":2,"directories":["/mnt/lustre/x"]}\n';
    writeFileSync(p('dfsFlrConfig'), before);
    t.replay!.load([
      loadState('lustre-flr-sync.service', 'loaded'),
      fixture([SYSTEMCTL, 'restart', '--', 'lustre-flr-sync.service'], '', {
        code: 5,
        stderr: 'Failed to restart lustre-flr-sync.service: Unit lustre-flr-sync.service not found.\n',
      }),
    ]);
    const r = await post('/flr/update', body);
    expect([r.status, errorOf(r).details]).toEqual([
      501,
      { setting: 'settings.dfs.flrService', unit: 'lustre-flr-sync.service', configPath: 'paths.dfsFlrConfig' },
    ]);
    expect(readFileSync(p('dfsFlrConfig'), 'utf8')).toBe(before);
    expect(events('dfs.flr.updated')).toEqual([]);
  });

  it('a failed restart of a unit that exists puts the previous configuration back (502)', async () => {
    mkdirSync(dirname(p('dfsFlrConfig')), { recursive: true });
    const before = '{"max_history_size":1,"run_interval":2,"directories":["/mnt/lustre/x"]}\n';
    writeFileSync(p('dfsFlrConfig'), before);
    t.replay!.load([
      loadState('lustre-flr-sync.service', 'loaded'),
      fixture([SYSTEMCTL, 'restart', '--', 'lustre-flr-sync.service'], '', {
        code: 1,
        stderr:
          'Job for lustre-flr-sync.service failed because the control process exited with error code.\nSee "systemctl status lustre-flr-sync.service" and "journalctl -xeu lustre-flr-sync.service" for details.\n',
      }),
    ]);
    const r = await post('/flr/update', body);
    expect([r.status, errorOf(r).message]).toEqual([
      502,
      'the FLR service did not restart (previous configuration restored): Job for lustre-flr-sync.service failed because the control process exited with error code.',
    ]);
    expect(readFileSync(p('dfsFlrConfig'), 'utf8')).toBe(before);
    expect(events('dfs.flr.updated')).toEqual([]);
  });

  it('the unit and the file are the configured ones (settings.dfs.flrService, paths.dfsFlrConfig)', async () => {
    const h = await makeTestHost({
      routes: DFS_ROUTES,
      configure: (c, root) => {
        c.settings.dfs = { flrService: 'site-mirror-sync.service' };
        c.paths.dfsFlrConfig = join(root, 'etc', 'site', 'mirror-sync.json');
      },
    });
    try {
      h.replay!.load([
        loadState('site-mirror-sync.service', 'loaded'),
        ok([SYSTEMCTL, 'restart', '--', 'site-mirror-sync.service']),
      ]);
      const r = await h.call('POST', '/api/v2/dfs/flr/update', { body });
      expect(r.status).toBe(200);
      expect(h.replay!.calls.map((c) => c.argv)).toEqual([
        [SYSTEMCTL, 'show', '--property=LoadState', '--value', '--', 'site-mirror-sync.service'],
        [SYSTEMCTL, 'restart', '--', 'site-mirror-sync.service'],
      ]);
      expect(JSON.parse(readFileSync(h.config.paths.dfsFlrConfig, 'utf8'))).toEqual(r.json);
      h.replay!.load([loadState('site-mirror-sync.service', 'not-found')]);
      const missing = await h.call('POST', '/api/v2/dfs/flr/update', { body });
      expect([missing.status, errorOf(missing).message]).toEqual([
        501,
        'the FLR synchronisation service site-mirror-sync.service does not exist on this node: install the unit that reads paths.dfsFlrConfig, or name it in settings.dfs.flrService',
      ]);
    } finally {
      await h.close();
    }
  });

  it('refuses bad values and paths, and reads a broken file as 502', async () => {
    for (const b of [
      { ...body, run_interval: 0 },
      { ...body, max_history_size: 1.5 },
      { ...body, directories: [] },
      { ...body, directories: ['relative/dir'] },
      { ...body, directories: ['/mnt/../etc'] },
      { ...body, directories: ['/a', '/a/'] },
      { ...body, extra: true },
    ]) {
      expect((await post('/flr/update', b)).status, JSON.stringify(b)).toBe(400);
    }
    mkdirSync(dirname(p('dfsFlrConfig')), { recursive: true });
    writeFileSync(p('dfsFlrConfig'), '{"max_history_size":"x"}');
    expect((await t.call('GET', '/api/v2/dfs/flr/get')).status).toBe(502);
  });
});

describe('mount points stay under their configured roots', () => {
  it('a symlink planted at <clientMountRoot>/<fsName> pointing outside is refused (403), a file is a 409, nothing runs', async () => {
    const { symlinkSync } = await import('node:fs');
    mkdirSync(p('dfsClientMountRoot'), { recursive: true });
    symlinkSync('/etc', join(p('dfsClientMountRoot'), 'evil'));
    writeFileSync(join(p('dfsClientMountRoot'), 'afile'), '');
    const r = await post('/fs/mount', { fsName: 'evil', lnetId: '10.0.0.1@tcp' });
    expect(r.status).toBe(403);
    expect((await post('/fs/mount', { fsName: 'afile', lnetId: '10.0.0.1@tcp' })).status).toBe(409);
    expect(argvs().filter((a) => a[0] !== MOUNT || a.length > 3)).toEqual([]);
  });
});
