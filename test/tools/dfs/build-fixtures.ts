/**
 * Builds the dfs replay fixtures from the upstream Lustre samples:
 *   fixtures/dfs/<role>/  one fixture set per node role (mgs, mds, oss, client) for the route tests
 *   fixtures/demo/dfs/    the demo appliance: MGS+MDS node of `demofs` (two OSTs on 10.10.0.21)
 * Every fixture's `source` names the sample it was built from and what was composed.
 *   npx vite-node test/tools/dfs/build-fixtures.ts
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture, type Fixture } from '../../../runtime/system/fixture-file';
import { repo, sharedDir } from '../../parsers/dfs/samples';

const S = join(sharedDir(), 'upstream-samples', 'lustre');
const sample = (p: string) => readFileSync(join(S, p), 'utf8');
const B = {
  lctl: '/usr/sbin/lctl',
  lnetctl: '/usr/sbin/lnetctl',
  lfs: '/usr/bin/lfs',
  mount: '/usr/bin/mount',
  umount: '/usr/bin/umount',
  zpool: '/usr/sbin/zpool',
  zfs: '/usr/sbin/zfs',
  mkfs: '/usr/sbin/mkfs.lustre',
  install: '/usr/bin/install',
  systemctl: '/usr/bin/systemctl',
};

function save(dir: string, name: string, f: Omit<Fixture, 'code' | 'stderr'> & Partial<Fixture>) {
  writeFixture(join(repo, 'fixtures', dir, `${name}.yaml`), { code: 0, stderr: '', ...f } as Fixture);
}
const up = (p: string) => `upstream sample lustre/${p} (see shared/upstream-samples/lustre/SOURCES.md)`;

// ------------------------------------------------------------------------------------------ roles
for (const r of ['mgs', 'mds', 'oss', 'client'])
  rmSync(join(repo, 'fixtures', 'dfs', r), { recursive: true, force: true });

// MGS (standalone MGT, ldiskfs): the MGS lines of the 2.9.58 MGS+MDS device list
const mgsDl = sample('lctl-dl/iml-2.9.58-ldiskfs-mgs-mds.txt').split('\n').slice(0, 3).join('\n') + '\n';
save('dfs/mgs', 'lctl-dl', {
  source: `${up('lctl-dl/iml-2.9.58-ldiskfs-mgs-mds.txt')}: its first three lines (MGS-osd, mgs, mgc) = a standalone MGS`,
  argv: [B.lctl, 'dl'],
  stdout: mgsDl,
});
save('dfs/mgs', 'lctl-dl-t', {
  source: `as lctl-dl.yaml (-t adds nothing to mgs/mgc lines)`,
  argv: [B.lctl, 'dl', '-t'],
  stdout: mgsDl,
});
save('dfs/mgs', 'get-param-mgs', {
  source: `${up('lctl-get_param/lustrefs-exporter-osd-ldiskfs-mgs-mdt-osts.txt')} (osd-ldiskfs.MGS.fstype) + ${up('lctl-get_param/hp-exporter-mgs.MGS.filesystems.txt')} (two names: a multi-line value); mntdev composed`,
  argv: [B.lctl, 'get_param', 'mgs.MGS.filesystems', 'osd-ldiskfs.MGS.fstype', 'osd-ldiskfs.MGS.mntdev'],
  stdout:
    'mgs.MGS.filesystems=\nlustrefs\ntestfs\nosd-ldiskfs.MGS.fstype=ldiskfs\nosd-ldiskfs.MGS.mntdev=/dev/mapper/vg_pfs-mgs\n',
});
save('dfs/mgs', 'lnetctl-global-show', {
  source: up('lnetctl-global-show/gmagklaras-global-show-REINDENTED.yaml'),
  argv: [B.lnetctl, 'global', 'show'],
  stdout: sample('lnetctl-global-show/gmagklaras-global-show-REINDENTED.yaml'),
});
save('dfs/mgs', 'lnetctl-net-show', {
  source: up('lnetctl-net-show/cn-notes-2.15.1-net-show-o2ib-bond0.yaml'),
  argv: [B.lnetctl, 'net', 'show'],
  stdout: sample('lnetctl-net-show/cn-notes-2.15.1-net-show-o2ib-bond0.yaml'),
});
save('dfs/mgs', 'mount-t-lustre', {
  source: `${up('mount/ddn-upgrade-plan-mount-t-lustre-client-and-servers.txt')}: the MGT line`,
  argv: [B.mount, '-t', 'lustre'],
  stdout: '/dev/mapper/vg_pfs-mgs on /lustre/mgs type lustre (rw)\n',
});
save('dfs/mgs', 'lnetctl-export-down', {
  source: up('lnetctl-export/lustre-collector-export-LNET-DOWN-errors.yaml') + ' (exit status 1 as when LNet is down)',
  argv: [B.lnetctl, 'export'],
  code: 1,
  stdout: '',
  stderr: sample('lnetctl-export/lustre-collector-export-LNET-DOWN-errors.yaml'),
});

// MDS (osd-zfs, o2ib): the HP exporter's 2.10 ZFS MDS; device list composed from the all-in-one sample's MDT lines
const mdsDl =
  [
    '  0 UP osd-zfs lustrefs-MDT0000-osd lustrefs-MDT0000-osd_UUID 10',
    '  1 UP mgc MGC172.20.20.1@o2ib 2c1ab8f0-9d3e-4f5a-8b6c-7d8e9fa0b1c2 5',
    '  2 UP mds MDS MDS_uuid 3',
    '  3 UP lod lustrefs-MDT0000-mdtlov lustrefs-MDT0000-mdtlov_UUID 4',
    '  4 UP mdt lustrefs-MDT0000 lustrefs-MDT0000_UUID 13',
    '  5 UP mdd lustrefs-MDD0000 lustrefs-MDD0000_UUID 4',
    '  6 UP qmt lustrefs-QMT0000 lustrefs-QMT0000_UUID 4',
    '  7 UP osp lustrefs-OST0000-osc-MDT0000 lustrefs-MDT0000-mdtlov_UUID 5',
    '  8 IN osp lustrefs-OST0001-osc-MDT0000 lustrefs-MDT0000-mdtlov_UUID 5',
    '  9 UP lwp lustrefs-MDT0000-lwp-MDT0000 lustrefs-MDT0000-lwp-MDT0000_UUID 5',
  ].join('\n') + '\n';
const mdsSrc = `${up('lctl-dl/iml-2.5.0-zfs-all-in-one-mgs-mdt-oss-client.txt')}: its MDT lines renamed to the HP exporter's lustrefs and MGC172.20.20.1@o2ib (${up('lctl-get_param/hp-exporter-mgc.import.yaml')}); OST0001's osp set IN (inactive) to exercise warnings`;
save('dfs/mds', 'lctl-dl', { source: mdsSrc, argv: [B.lctl, 'dl'], stdout: mdsDl });
save('dfs/mds', 'lctl-dl-t', { source: mdsSrc, argv: [B.lctl, 'dl', '-t'], stdout: mdsDl });
const hp = sample('lctl-get_param/hp-exporter-osd-zfs-procfs-values.txt');
const hpVal = (k: string) => new RegExp(`==> proc/fs/lustre/osd-zfs/lustrefs-MDT0000/${k} <==\\n(.*)\\n`).exec(hp)![1];
save('dfs/mds', 'get-param-mdt', {
  source: `${up('lctl-get_param/hp-exporter-osd-zfs-procfs-values.txt')}: the lustrefs-MDT0000 values as get_param prints them; mdt.readonly composed`,
  argv: [
    B.lctl,
    'get_param',
    ...['blocksize', 'kbytesavail', 'kbytesfree', 'kbytestotal', 'mntdev'].map((k) => `osd-zfs.lustrefs-MDT0000.${k}`),
    'mdt.lustrefs-MDT0000.readonly',
  ],
  stdout:
    ['blocksize', 'kbytesavail', 'kbytesfree', 'kbytestotal', 'mntdev']
      .map((k) => `osd-zfs.lustrefs-MDT0000.${k}=${hpVal(k)}`)
      .join('\n') + '\nmdt.lustrefs-MDT0000.readonly=0\n',
});
save('dfs/mds', 'lnetctl-peer-show', {
  source: up('lnetctl-peer-show/lustre-man-lnetctl-peer-show-o2ib-multinid.yaml'),
  argv: [B.lnetctl, 'peer', 'show'],
  stdout: sample('lnetctl-peer-show/lustre-man-lnetctl-peer-show-o2ib-multinid.yaml'),
});
save('dfs/mds', 'lnetctl-peer-show-v', {
  source:
    up('lnetctl-export/lustre-collector-export-2.12-tcp-with-peers-tcp-bonding.yaml') +
    ': its peer: block (2.12 verbose peer show prints the same per-NI keys)',
  argv: [B.lnetctl, 'peer', 'show', '-v'],
  stdout:
    sample('lnetctl-export/lustre-collector-export-2.12-tcp-with-peers-tcp-bonding.yaml')
      .split('\n')
      .filter((_, i, a) => i >= a.indexOf('peer:') && i < a.indexOf('global:'))
      .join('\n') + '\n',
});
save('dfs/mds', 'lnetctl-net-show', {
  source:
    up('lnetctl-net-show/lustrefs-exporter-net-show-v4-o2ib-2nis-SUSPECT.yaml') +
    ' (a -v 4 capture answers the plain call here: the parser keeps the spec fields only)',
  argv: [B.lnetctl, 'net', 'show'],
  stdout: sample('lnetctl-net-show/lustrefs-exporter-net-show-v4-o2ib-2nis-SUSPECT.yaml'),
});
save('dfs/mds', 'lnetctl-stats-show', {
  source: up('lnetctl-stats-show/lustre-collector-2.14.0_ddn145-stats-show.yaml'),
  argv: [B.lnetctl, 'stats', 'show'],
  stdout: sample('lnetctl-stats-show/lustre-collector-2.14.0_ddn145-stats-show.yaml'),
});
save('dfs/mds', 'lnetctl-export', {
  source: up('lnetctl-export/lustre-collector-export-tcp-node-o2ib-peers.yaml'),
  argv: [B.lnetctl, 'export'],
  stdout: sample('lnetctl-export/lustre-collector-export-tcp-node-o2ib-peers.yaml'),
});
save('dfs/mds', 'mount-t-lustre', {
  source: 'composed: the MDT dataset of the HP exporter system mounted as a target',
  argv: [B.mount, '-t', 'lustre'],
  stdout:
    'mdt/mdt on /lustre/lustrefs-MDT0000 type lustre (ro,svname=lustrefs-MDT0000,mgsnode=172.20.20.1@o2ib,osd=osd-zfs)\n',
});
save('dfs/mds', 'zpool-list-mdt', {
  source: `${up('zpool/cn-notes-2.15.1-zpool-list.txt')} with the pool renamed mdt`,
  argv: [B.zpool, 'list', '--', 'mdt'],
  stdout: sample('zpool/cn-notes-2.15.1-zpool-list.txt').replace(/metapool/g, 'mdt'),
});
save('dfs/mds', 'zpool-status-mdt', {
  source: `${up('zpool/jjaakkol-zpool-status-resilvering.txt')} with the pool renamed mdt`,
  argv: [B.zpool, 'status', '--', 'mdt'],
  stdout: sample('zpool/jjaakkol-zpool-status-resilvering.txt').replace(/MDT1/g, 'mdt'),
});
save('dfs/mds', 'zfs-list-mdt-mdt', {
  source: `${up('zfs-list/prodfeng-2.15-zfs-list-mdt-ost.txt')}: header and the metapool/mdt line, pool renamed mdt`,
  argv: [B.zfs, 'list', '--', 'mdt/mdt'],
  stdout: 'NAME           USED  AVAIL     REFER  MOUNTPOINT\nmdt/mdt         96K   831M       96K  /mdt/mdt\n',
});
save('dfs/mds', 'zfs-list-mdt-missing', {
  source: 'zfs 2.1 error text for a missing dataset (composed)',
  argv: [B.zfs, 'list', '--', 'mdt/nothere'],
  code: 1,
  stdout: '',
  stderr: "cannot open 'mdt/nothere': dataset does not exist\n",
});
save('dfs/mds', 'zpool-list-missing', {
  source: 'zpool 2.1 error text for a missing pool (composed)',
  argv: [B.zpool, 'list', '--', 'nopool'],
  code: 1,
  stdout: '',
  stderr: "cannot open 'nopool': no such pool\n",
});
save('dfs/mds', 'mkfs-mdt1', {
  source: `${up('mkfs.lustre/jjaakkol-mkfs-zfs-mdt-servicenode-no_primnode.txt')} with fs/pool/index/NIDs of this host (no servicenode: flags 0x61)`,
  argv: [
    B.mkfs,
    '--mdt',
    '--backfstype=zfs',
    '--fsname=lustrefs',
    '--index=1',
    '--mgsnode=172.20.20.1@o2ib',
    '--',
    'mdt/lustrefs-mdt1',
  ],
  stdout:
    '\n   Permanent disk data:\nTarget:     lustrefs:MDT0001\nIndex:      1\nLustre FS:  lustrefs\nMount type: zfs\nFlags:      0x61\n              (MDT first_time update )\nPersistent mount opts: \nParameters: mgsnode=172.20.20.1@o2ib\nchecking for existing Lustre data: not found\nmkfs_cmd = zfs create -o canmount=off  mdt/lustrefs-mdt1\n  xattr=sa\n  dnodesize=auto\nWriting mdt/lustrefs-mdt1 properties\n  lustre:mgsnode=172.20.20.1@o2ib\n  lustre:version=1\n  lustre:flags=97\n  lustre:index=1\n  lustre:fsname=lustrefs\n  lustre:svname=lustrefs:MDT0001\n',
});

// OSS (ldiskfs): the 2.9.58 OSS device list verbatim
const ossDl = sample('lctl-dl/iml-2.9.58-ldiskfs-oss.txt');
save('dfs/oss', 'lctl-dl', { source: up('lctl-dl/iml-2.9.58-ldiskfs-oss.txt'), argv: [B.lctl, 'dl'], stdout: ossDl });
save('dfs/oss', 'lctl-dl-t', {
  source: up('lctl-dl/iml-2.9.58-ldiskfs-oss.txt') + ' (-t adds nothing on a server)',
  argv: [B.lctl, 'dl', '-t'],
  stdout: ossDl,
});
save('dfs/oss', 'get-param-ost', {
  source: `${up('lctl-get_param/lustrefs-exporter-osd-ldiskfs-mgs-mdt-osts.txt')}: fs-OST0000's kbytes values under the OSS's target name; blocksize/mntdev composed`,
  argv: [
    B.lctl,
    'get_param',
    ...['blocksize', 'kbytesavail', 'kbytesfree', 'kbytestotal', 'mntdev'].map(
      (k) => `osd-ldiskfs.testfs-OST0000.${k}`,
    ),
  ],
  stdout:
    'osd-ldiskfs.testfs-OST0000.blocksize=4096\nosd-ldiskfs.testfs-OST0000.kbytesavail=4037288\nosd-ldiskfs.testfs-OST0000.kbytesfree=4106100\nosd-ldiskfs.testfs-OST0000.kbytestotal=4108388\nosd-ldiskfs.testfs-OST0000.mntdev=/dev/mapper/ost_pfs_0\n',
});
save('dfs/oss', 'mount-t-lustre', {
  source: `${up('mount/ddn-upgrade-plan-mount-t-lustre-client-and-servers.txt')}: the oss0 lines`,
  argv: [B.mount, '-t', 'lustre'],
  stdout:
    '/dev/mapper/ost_pfs_0 on /lustre/pfs/ost_0 type lustre (rw)\n/dev/mapper/ost_pfs_1 on /lustre/pfs/ost_1 type lustre (rw)\n',
});
save('dfs/oss', 'lnetctl-net-show', {
  source: up('lnetctl-net-show/manual-2.10-net-show-v-tcp-2nis.yaml'),
  argv: [B.lnetctl, 'net', 'show'],
  stdout: sample('lnetctl-net-show/manual-2.10-net-show-v-tcp-2nis.yaml'),
});
save('dfs/oss', 'lctl-ping-mds-failed', {
  source: up('lctl-ping/gmagklaras-lctl-ping-failed-EIO.txt') + ' (ioctl path: on stderr, exit 1)',
  argv: [B.lctl, 'ping', '192.168.14.121@tcp'],
  code: 1,
  stdout: '',
  stderr: sample('lctl-ping/gmagklaras-lctl-ping-failed-EIO.txt'),
});
save('dfs/oss', 'lctl-ping-mgs', {
  source: up('lctl-ping/cnloh-exa-client-ping-server-with-2-nids.txt'),
  argv: [B.lctl, 'ping', '192.168.3.105@tcp'],
  stdout: sample('lctl-ping/cnloh-exa-client-ping-server-with-2-nids.txt'),
});

// Client (Cray, 4 filesystems over o2ib): NERSC's lctl dl -t and lfs df, split per mount
const nerscDl = sample('lctl-dl/nersc-pytokio-lctl-dl-t-cray-client-4fs-o2ib.txt');
save('dfs/client', 'lctl-dl-t', {
  source: up('lctl-dl/nersc-pytokio-lctl-dl-t-cray-client-4fs-o2ib.txt'),
  argv: [B.lctl, 'dl', '-t'],
  stdout: nerscDl,
});
const mounts: [string, string, string][] = [
  ['snx11035', '10.100.101.3@o2ib2', '/scratch2'],
  ['snx11036', '10.100.102.3@o2ib3', '/scratch3'],
  ['snx11168', '10.100.104.4@o2ib4', '/global/cscratch1'],
  ['snx11025', '10.100.100.3@o2ib1', '/scratch1'],
];
save('dfs/client', 'mount-t-lustre', {
  source: `composed from the mgc lines (MGS NIDs) of ${up('lctl-dl/nersc-pytokio-lctl-dl-t-cray-client-4fs-o2ib.txt')} and the mount points of ${up('lfs-df/nersc-pytokio-lfs-df-cray-4fs.txt')}`,
  argv: [B.mount, '-t', 'lustre'],
  stdout: mounts.map(([fs, nid, dir]) => `${nid}:/${fs} on ${dir} type lustre (rw,flock,lazystatfs)`).join('\n') + '\n',
});
const blocks = sample('lfs-df/nersc-pytokio-lfs-df-cray-4fs.txt').split(/\n(?=UUID )/);
mounts.forEach(([fs, , dir], i) => {
  save('dfs/client', `lfs-df-${fs}`, {
    source: `${up('lfs-df/nersc-pytokio-lfs-df-cray-4fs.txt')}: block ${i + 1} (${dir})`,
    argv: [B.lfs, 'df', '--lazy', dir],
    stdout: blocks[i].replace(/\n*$/, '\n'),
  });
});
save('dfs/client', 'lnetctl-net-show', {
  source: up('lnetctl-net-show/jjaakkol-client-net-show-plain.yaml'),
  argv: [B.lnetctl, 'net', 'show'],
  stdout: sample('lnetctl-net-show/jjaakkol-client-net-show-plain.yaml'),
});

// ------------------------------------------------------------------------------------------- demo
rmSync(join(repo, 'fixtures', 'demo', 'dfs'), { recursive: true, force: true });
const D = 'demo/dfs';
const demo = (what: string) =>
  `demo appliance mds01 (MGS+MDS of demofs, OSS 10.10.0.21@tcp; composed in the formats of ${what})`;
const demoDlT = [
  '  0 UP osd-zfs MGS-osd MGS-osd_UUID 4',
  '  1 UP mgs MGS MGS 6',
  '  2 UP mgc MGC10.10.0.11@tcp 6c8e5b3a-1f2d-4e5a-9b7c-0d1e2f3a4b5c 4',
  '  3 UP osd-zfs demofs-MDT0000-osd demofs-MDT0000-osd_UUID 9',
  '  4 UP mds MDS MDS_uuid 2',
  '  5 UP lod demofs-MDT0000-mdtlov demofs-MDT0000-mdtlov_UUID 3',
  '  6 UP mdt demofs-MDT0000 demofs-MDT0000_UUID 12',
  '  7 UP mdd demofs-MDD0000 demofs-MDD0000_UUID 3',
  '  8 UP qmt demofs-QMT0000 demofs-QMT0000_UUID 3',
  '  9 UP osp demofs-OST0000-osc-MDT0000 demofs-MDT0000-mdtlov_UUID 4',
  ' 10 UP osp demofs-OST0001-osc-MDT0000 demofs-MDT0000-mdtlov_UUID 4',
  ' 11 UP lwp demofs-MDT0000-lwp-MDT0000 demofs-MDT0000-lwp-MDT0000_UUID 4',
  ' 12 UP lov demofs-clilov-ffff9a4c3b2e1000 3f1c2d4e-5a6b-7c8d-9e0f-1a2b3c4d5e6f 3',
  ' 13 UP lmv demofs-clilmv-ffff9a4c3b2e1000 3f1c2d4e-5a6b-7c8d-9e0f-1a2b3c4d5e6f 4',
  ' 14 UP mdc demofs-MDT0000-mdc-ffff9a4c3b2e1000 3f1c2d4e-5a6b-7c8d-9e0f-1a2b3c4d5e6f 4 0@lo',
  ' 15 UP osc demofs-OST0000-osc-ffff9a4c3b2e1000 3f1c2d4e-5a6b-7c8d-9e0f-1a2b3c4d5e6f 4 10.10.0.21@tcp',
  ' 16 UP osc demofs-OST0001-osc-ffff9a4c3b2e1000 3f1c2d4e-5a6b-7c8d-9e0f-1a2b3c4d5e6f 4 10.10.0.21@tcp',
];
save(D, 'lctl-dl-t', {
  source: demo('lctl-dl/iml-2.5.0-zfs-all-in-one-mgs-mdt-oss-client.txt and nersc -t'),
  argv: [B.lctl, 'dl', '-t'],
  stdout: demoDlT.join('\n') + '\n',
});
save(D, 'lctl-dl', {
  source: demo('lctl dl'),
  argv: [B.lctl, 'dl'],
  stdout: demoDlT.map((l) => l.replace(/ (0@lo|10\.10\.0\.21@tcp)$/, '')).join('\n') + '\n',
});
save(D, 'get-param-mgs', {
  source: demo('lctl-get_param/hp-exporter-*'),
  argv: [B.lctl, 'get_param', 'mgs.MGS.filesystems', 'osd-zfs.MGS.fstype', 'osd-zfs.MGS.mntdev'],
  stdout: 'mgs.MGS.filesystems=demofs\nosd-zfs.MGS.fstype=zfs\nosd-zfs.MGS.mntdev=mgspool/mgs\n',
});
save(D, 'get-param-mdt0', {
  source: demo('lctl-get_param/hp-exporter-osd-zfs-procfs-values.txt'),
  argv: [
    B.lctl,
    'get_param',
    ...['blocksize', 'kbytesavail', 'kbytesfree', 'kbytestotal', 'mntdev'].map((k) => `osd-zfs.demofs-MDT0000.${k}`),
    'mdt.demofs-MDT0000.readonly',
  ],
  stdout:
    'osd-zfs.demofs-MDT0000.blocksize=131072\nosd-zfs.demofs-MDT0000.kbytesavail=41686528\nosd-zfs.demofs-MDT0000.kbytesfree=41688576\nosd-zfs.demofs-MDT0000.kbytestotal=41694848\nosd-zfs.demofs-MDT0000.mntdev=mdtpool/demofs-mdt0\nmdt.demofs-MDT0000.readonly=0\n',
});
const demoNet =
  'net:\n    - net type: lo\n      local NI(s):\n        - nid: 0@lo\n          status: up\n    - net type: tcp\n      local NI(s):\n        - nid: 10.10.0.11@tcp\n          status: up\n          interfaces:\n              0: eth1\n';
const demoNetTcp1 =
  'net:\n    - net type: tcp1\n      local NI(s):\n        - nid: 10.20.0.11@tcp1\n          status: up\n          interfaces:\n              0: eth2\n';
save(D, 'lnetctl-net-show', {
  source: demo('lnetctl-net-show/cn-notes-2.15.1-net-show-o2ib-bond0.yaml'),
  argv: [B.lnetctl, 'net', 'show'],
  stdout: demoNet,
});
save(D, 'lnetctl-net-add-tcp1', {
  source: demo('lnetctl net add (prints nothing on success); once: a second add is refused'),
  argv: [B.lnetctl, 'net', 'add', '--net', 'tcp1', '--if', 'eth2'],
  stdout: '',
  once: true,
});
save(D, 'lnetctl-net-add-tcp1-again', {
  source: demo('lnetctl 2.15 add error YAML on stderr (EEXIST)'),
  argv: [B.lnetctl, 'net', 'add', '--net', 'tcp1', '--if', 'eth2'],
  code: 1,
  stdout: '',
  stderr: 'add:\n    - net:\n          errno: -17\n          descr: "cannot add network: File exists"\n',
});
// add and remove answer `lnetctl net show` (every network): the node's list after each change
save(D, 'lnetctl-net-show-after-add-tcp1', {
  source:
    'demo appliance mds01 (MGS+MDS of demofs, OSS 10.10.0.21@tcp): lnetctl-net-show.yaml after the lnet add example (tcp1 on eth2); composed in the formats of lnetctl-net-show/cn-notes-2.15.1-net-show-o2ib-bond0.yaml',
  after: 'dfs/lnetctl-net-add-tcp1',
  argv: [B.lnetctl, 'net', 'show'],
  stdout: demoNet + demoNetTcp1.slice('net:\n'.length),
});
save(D, 'lnetctl-net-show-after-del-tcp1', {
  source:
    'demo appliance mds01: lnetctl-net-show.yaml again after the lnet remove example took tcp1 off eth2 (lo and tcp on eth1)',
  after: 'dfs/lnetctl-net-del-tcp1',
  argv: [B.lnetctl, 'net', 'show'],
  stdout: demoNet,
});
save(D, 'lnetctl-net-del-tcp1', {
  source: demo('lnetctl net del (prints nothing on success); once: a second del finds nothing'),
  argv: [B.lnetctl, 'net', 'del', '--net', 'tcp1', '--if', 'eth2'],
  stdout: '',
  once: true,
});
save(D, 'lnetctl-net-del-tcp1-again', {
  source: demo('lnetctl 2.15 del error YAML on stderr (ENOENT)'),
  argv: [B.lnetctl, 'net', 'del', '--net', 'tcp1', '--if', 'eth2'],
  code: 1,
  stdout: '',
  stderr:
    'del:\n    - net:\n          errno: -2\n          descr: "cannot delete network: No such file or directory"\n',
});
save(D, 'lnetctl-stats-show', {
  source: demo('lnetctl-stats-show/lustrefs-exporter-stats-show.yaml'),
  argv: [B.lnetctl, 'stats', 'show'],
  stdout: sample('lnetctl-stats-show/lustrefs-exporter-stats-show.yaml') + '\n',
});
save(D, 'lnetctl-global-show', {
  source: demo('lnetctl-global-show/lustrefs-exporter-global-show.yaml'),
  argv: [B.lnetctl, 'global', 'show'],
  stdout: sample('lnetctl-global-show/lustrefs-exporter-global-show.yaml'),
});
save(D, 'lnetctl-lnet-configure', {
  source: demo('lnetctl lnet configure (prints nothing on success)'),
  argv: [B.lnetctl, 'lnet', 'configure', '--all'],
  stdout: '',
});
save(D, 'lnetctl-import', {
  source: demo('lnetctl import (prints nothing on success)'),
  argv: [B.lnetctl, 'import', '$ROOT/var/lib/ballast/lnet/lnet-import.yaml'],
  stdout: '',
});
save(D, 'lnetctl-export', {
  source: demo('lnetctl-export/lustre-collector-export-2.12-tcp-with-peers-tcp-bonding.yaml'),
  argv: [B.lnetctl, 'export'],
  stdout: `${demoNet}peer:\n    - primary nid: 10.10.0.21@tcp\n      Multi-Rail: True\n      peer ni:\n        - nid: 10.10.0.21@tcp\n          state: up\nglobal:\n    numa_range: 0\n    max_intf: 200\n    discovery: 1\n    drop_asym_route: 0\n`,
});
const demoPeers =
  'peer:\n    - primary nid: 0@lo\n      Multi-Rail: False\n      peer ni:\n        - nid: 0@lo\n          state: NA\n    - primary nid: 10.10.0.21@tcp\n      Multi-Rail: True\n      peer ni:\n        - nid: 10.10.0.21@tcp\n          state: up\n';
save(D, 'lnetctl-peer-show', {
  source: demo('lnetctl-peer-show/lustre-man-lnetctl-peer-show-o2ib-multinid.yaml'),
  argv: [B.lnetctl, 'peer', 'show'],
  stdout: demoPeers,
});
save(D, 'lnetctl-peer-show-v', {
  source: demo('lnetctl-peer-show/manual-2.10-peer-show-v-multirail.yaml'),
  argv: [B.lnetctl, 'peer', 'show', '-v'],
  stdout: demoPeers.replace(
    /state: (NA|up)\n/g,
    (m) =>
      `${m}          max_ni_tx_credits: 8\n          available_tx_credits: 8\n          min_tx_credits: 7\n          tx_q_num_of_buf: 0\n          available_rtr_credits: 8\n          min_rtr_credits: 8\n          refcount: 1\n          statistics:\n              send_count: 120\n              recv_count: 118\n              drop_count: 0\n`,
  ),
});
save(D, 'lctl-ping-oss', {
  source: demo('lctl-ping/gmagklaras-lctl-ping-ok-oss-to-mds.txt'),
  argv: [B.lctl, 'ping', '10.10.0.21@tcp'],
  stdout: '12345-0@lo\n12345-10.10.0.21@tcp\n',
});
save(D, 'mount-t-lustre', {
  source: demo('mount/ddn-upgrade-plan-mount-t-lustre-client-and-servers.txt'),
  argv: [B.mount, '-t', 'lustre'],
  stdout:
    'mgspool/mgs on /lustre/MGS type lustre (ro,svname=MGS,nosvc,mgs,osd=osd-zfs)\nmdtpool/demofs-mdt0 on /lustre/demofs-MDT0000 type lustre (ro,svname=demofs-MDT0000,mgsnode=10.10.0.11@tcp,osd=osd-zfs)\n10.10.0.11@tcp:/demofs on /mnt/lustre/demofs type lustre (rw,checksum,flock,nouser_xattr,lruresize,lazystatfs,nouser_fid2path,verbose,encrypt)\n',
});
save(D, 'lfs-df-demofs', {
  source: demo('lfs-df/jjaakkol-lfs-df-2mdt-2ost-zfs.txt'),
  argv: [B.lfs, 'df', '--lazy', '/mnt/lustre/demofs'],
  stdout:
    'UUID                   1K-blocks        Used   Available Use% Mounted on\ndemofs-MDT0000_UUID     41694848        6272    41686528   1% /mnt/lustre/demofs[MDT:0]\ndemofs-OST0000_UUID     98706432     5615616    93088768   6% /mnt/lustre/demofs[OST:0]\ndemofs-OST0001_UUID    100038656     3591168    96445440   4% /mnt/lustre/demofs[OST:1]\n\nfilesystem_summary:    198745088     9206784   189534208   5% /mnt/lustre/demofs\n',
});
const zl = (pool: string, size: string, alloc: string, free: string, cap: string) =>
  `NAME       SIZE  ALLOC   FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP    HEALTH  ALTROOT\n${pool.padEnd(9)} ${size.padStart(5)}  ${alloc.padStart(5)}  ${free.padStart(5)}        -         -     0%    ${cap.padStart(3)}  1.00x    ONLINE  -\n`;
save(D, 'zpool-list-mdtpool', {
  source: demo('zpool/cn-notes-2.15.1-zpool-list.txt'),
  argv: [B.zpool, 'list', '--', 'mdtpool'],
  stdout: zl('mdtpool', '39.5G', '8.32M', '39.5G', '0%'),
});
save(D, 'zpool-list-mgspool', {
  source: demo('zpool/cn-notes-2.15.1-zpool-list.txt'),
  argv: [B.zpool, 'list', '--', 'mgspool'],
  stdout: zl('mgspool', '960M', '3.30M', '957M', '0%'),
});
save(D, 'zpool-list-ostpool', {
  source: demo('zpool/cn-notes-2.15.1-zpool-list.txt'),
  argv: [B.zpool, 'list', '--', 'ostpool'],
  stdout: zl('ostpool', '95.5G', '1.02M', '95.5G', '0%'),
});
save(D, 'zpool-status-mdtpool', {
  source: demo('zpool/cn-notes-2.15.1-zpool-status-mirror-nvme.txt'),
  argv: [B.zpool, 'status', '--', 'mdtpool'],
  stdout:
    '  pool: mdtpool\n state: ONLINE\nconfig:\n\n\tNAME         STATE     READ WRITE CKSUM\n\tmdtpool      ONLINE       0     0     0\n\t  mirror-0   ONLINE       0     0     0\n\t    nvme0n1  ONLINE       0     0     0\n\t    nvme1n1  ONLINE       0     0     0\n\nerrors: No known data errors\n',
});
save(D, 'zfs-list-mdt0', {
  source: demo('zfs-list/jjaakkol-zfs-list-mds.txt'),
  argv: [B.zfs, 'list', '--', 'mdtpool/demofs-mdt0'],
  stdout:
    'NAME                  USED  AVAIL     REFER  MOUNTPOINT\nmdtpool/demofs-mdt0  6.12M  39.4G     6.12M  /mdtpool/demofs-mdt0\n',
});
// mount scratch (client) persistently
save(D, 'install-d-scratch', {
  source: demo('install -d (prints nothing)'),
  argv: [B.install, '-d', '-m', '0755', '--', '$ROOT/mnt/lustre/scratch'],
  stdout: '',
});
save(D, 'mount-scratch', {
  source: demo('mount -t lustre (prints nothing on success)'),
  argv: [B.mount, '-t', 'lustre', '--', '10.10.0.31@tcp:/scratch', '$ROOT/mnt/lustre/scratch'],
  stdout: '',
});
// create_mgs with reformat: stop the MGS, reformat, start it
save(D, 'umount-mgs', { source: demo('umount (prints nothing)'), argv: [B.umount, '--', '/lustre/MGS'], stdout: '' });
save(D, 'mkfs-mgs-reformat', {
  source: demo('mkfs.lustre/cn-notes-2.15.1-mkfs-zfs-mgs-mdt-o2ib-acl.txt (a standalone MGS: Target MGS, flags 0x64)'),
  argv: [B.mkfs, '--mgs', '--backfstype=zfs', '--reformat', '--', 'mgspool/mgs'],
  stdout:
    '\n   Permanent disk data:\nTarget:     MGS\nIndex:      unassigned\nLustre FS:  \nMount type: zfs\nFlags:      0x64\n              (MGS first_time update )\nPersistent mount opts: \nParameters:\nmkfs_cmd = zfs create -o canmount=off  mgspool/mgs\n  xattr=sa\n  dnodesize=auto\nWriting mgspool/mgs properties\n  lustre:version=1\n  lustre:flags=100\n  lustre:index=65535\n  lustre:svname=MGS\n',
});
save(D, 'install-d-mgs', {
  source: demo('install -d'),
  argv: [B.install, '-d', '-m', '0755', '--', '$ROOT/lustre/MGS'],
  stdout: '',
});
save(D, 'mount-mgs', {
  source: demo('mount -t lustre'),
  argv: [B.mount, '-t', 'lustre', '--', 'mgspool/mgs', '$ROOT/lustre/MGS'],
  stdout: '',
});
// create_mdt 1 on mdtpool
save(D, 'mkfs-mdt1', {
  source: demo('mkfs.lustre/jjaakkol-mkfs-zfs-mdt-servicenode-no_primnode.txt'),
  argv: [
    B.mkfs,
    '--mdt',
    '--backfstype=zfs',
    '--fsname=demofs',
    '--index=1',
    '--mgsnode=10.10.0.11@tcp',
    '--',
    'mdtpool/demofs-mdt1',
  ],
  stdout:
    '\n   Permanent disk data:\nTarget:     demofs:MDT0001\nIndex:      1\nLustre FS:  demofs\nMount type: zfs\nFlags:      0x61\n              (MDT first_time update )\nPersistent mount opts: \nParameters: mgsnode=10.10.0.11@tcp\nchecking for existing Lustre data: not found\nmkfs_cmd = zfs create -o canmount=off  mdtpool/demofs-mdt1\n  xattr=sa\n  dnodesize=auto\nWriting mdtpool/demofs-mdt1 properties\n  lustre:mgsnode=10.10.0.11@tcp\n  lustre:version=1\n  lustre:flags=97\n  lustre:index=1\n  lustre:fsname=demofs\n  lustre:svname=demofs:MDT0001\n',
});
save(D, 'install-d-mdt1', {
  source: demo('install -d'),
  argv: [B.install, '-d', '-m', '0755', '--', '$ROOT/lustre/demofs-MDT0001'],
  stdout: '',
});
save(D, 'mount-mdt1', {
  source: demo('mount -t lustre'),
  argv: [B.mount, '-t', 'lustre', '--', 'mdtpool/demofs-mdt1', '$ROOT/lustre/demofs-MDT0001'],
  stdout: '',
});
// create_ost 2 on ostpool
save(D, 'mkfs-ost2', {
  source: demo('mkfs.lustre/cn-notes-2.15.1-mkfs-zfs-ost-o2ib.txt'),
  argv: [
    B.mkfs,
    '--ost',
    '--backfstype=zfs',
    '--fsname=demofs',
    '--index=2',
    '--mgsnode=10.10.0.11@tcp',
    '--',
    'ostpool/demofs-ost2',
  ],
  stdout:
    '\n   Permanent disk data:\nTarget:     demofs:OST0002\nIndex:      2\nLustre FS:  demofs\nMount type: zfs\nFlags:      0x62\n              (OST first_time update )\nPersistent mount opts:\nParameters: mgsnode=10.10.0.11@tcp\nmkfs_cmd = zfs create -o canmount=off  ostpool/demofs-ost2\n  xattr=sa\n  dnodesize=auto\n  recordsize=1M\nWriting ostpool/demofs-ost2 properties\n  lustre:mgsnode=10.10.0.11@tcp\n  lustre:version=1\n  lustre:flags=98\n  lustre:index=2\n  lustre:fsname=demofs\n  lustre:svname=demofs:OST0002\n',
});
save(D, 'install-d-ost2', {
  source: demo('install -d'),
  argv: [B.install, '-d', '-m', '0755', '--', '$ROOT/lustre/demofs-OST0002'],
  stdout: '',
});
save(D, 'mount-ost2', {
  source: demo('mount -t lustre'),
  argv: [B.mount, '-t', 'lustre', '--', 'ostpool/demofs-ost2', '$ROOT/lustre/demofs-OST0002'],
  stdout: '',
});
save(D, 'systemctl-show-flr', {
  source: demo('systemctl show --property=LoadState --value (the unit file exists: loaded)'),
  argv: [B.systemctl, 'show', '--property=LoadState', '--value', '--', 'lustre-flr-sync.service'],
  stdout: 'loaded\n',
});
save(D, 'systemctl-restart-flr', {
  source: demo('systemctl restart (prints nothing on success)'),
  argv: [B.systemctl, 'restart', '--', 'lustre-flr-sync.service'],
  stdout: '',
});
