/**
 * Route tier: what POST /pod/config lets a pod:manage token write into the engine's daemon.json
 * (handlers/pod/daemon-json.ts, README "Container system configuration"). Table-driven: each
 * accepted body is written as sent and the engine restarted; each refused body is a 400 naming
 * the key, runs nothing and writes no daemon.json. data-root is confined on real paths under a
 * private mount root (symlinks resolved by the host).
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Fixture } from '../../runtime/system/fixture-file';
import { errorOf, issuePaths } from '../helpers/answers';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { POD_ROUTES } from './pod-helpers';

const SC = '/usr/bin/systemctl';
const lsblk = (dev: string) =>
  fixture(
    ['/usr/bin/lsblk', '-J', '-d', '-o', 'PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS', '--', dev],
    `{"blockdevices":[{"path":"${dev}","type":"disk","fstype":"xfs","uuid":"u-1","mountpoints":[null]}]}`,
  );
const findmnt = (p: string) =>
  fixture(
    ['/usr/bin/findmnt', '-J', '-o', 'TARGET,SOURCE,FSTYPE', '--mountpoint', p],
    `{"filesystems":[{"target":"${p}","source":"/dev/sdb","fstype":"xfs"}]}`,
  );
const engine: Fixture[] = [fixture([SC, 'daemon-reload'], ''), fixture([SC, 'restart', '--', 'docker.service'], '')];

async function host(fixtures: Fixture[], pod: Record<string, unknown> = {}): Promise<TestHost> {
  const t = await makeTestHost({
    routes: POD_ROUTES,
    fixtures: [...fixtures, ...engine],
    config: { settings: { pod: { checkHostPorts: false, ...pod } } },
  });
  writeFileSync(t.config.paths.fstab, '/dev/sda1 / ext4 defaults 0 1\n');
  return t;
}

describe('daemon.json keys and values', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await host([lsblk('/dev/sdc'), findmnt('/srv/data')]);
  });
  afterAll(async () => t?.close());
  beforeEach(() => rmSync(t.config.paths.dockerDaemonJson, { force: true }));

  const post = (configJson: unknown) =>
    t.call('POST', '/api/v2/pod/config', { body: { configJson, podImageFs: '/dev/sdc', podDataFs: '/srv/data' } });

  const accepted: [string, Record<string, unknown>][] = [
    ['nothing', {}],
    [
      'an appliance engine: logs, pools, mirrors, a private insecure registry, hardening',
      {
        'storage-driver': 'overlay2',
        'storage-opts': ['overlay2.size=20G', 'overlay2.override_kernel_check=true'],
        'log-driver': 'json-file',
        'log-opts': { 'max-size': '10m', 'max-file': '3', compress: 'true', tag: '{{.Name}}', labels: 'pod,tier' },
        'log-level': 'info',
        'live-restore': true,
        'default-address-pools': [{ base: '172.30.0.0/16', size: 24 }],
        bip: '172.17.0.1/16',
        mtu: 1500,
        dns: ['10.0.0.2', '2001:db8::53'],
        'dns-search': ['lab.example'],
        'dns-opts': ['ndots:2'],
        'registry-mirrors': ['https://mirror.lab.example:5000/v2'],
        'insecure-registries': [
          'registry.lab:5000',
          '192.168.1.10',
          '10.20.0.0/16',
          '10.255.0.0/16',
          '172.16.5.0/24',
          '172.31.0.0/16',
          '192.168.0.0/16',
        ],
        'max-concurrent-downloads': 4,
        'max-concurrent-uploads': 2,
        'max-download-attempts': 5,
        'shutdown-timeout': 30,
        'exec-opts': ['native.cgroupdriver=systemd'],
        'default-ulimits': {
          nofile: { Name: 'nofile', Hard: 65536, Soft: 65536 },
          core: { Name: 'core', Hard: -1, Soft: 0 },
        },
        'default-cgroupns-mode': 'private',
        'default-ipc-mode': 'private',
        init: true,
        icc: false,
        iptables: true,
        ip6tables: false,
        'ip-forward': true,
        'ip-masq': true,
        ipv6: false,
        'userland-proxy': false,
        'no-new-privileges': true,
        'userns-remap': 'default',
        debug: false,
        experimental: false,
        features: { buildkit: true },
      },
    ],
    [
      "the host's syslog",
      { 'log-driver': 'syslog', 'log-opts': { 'syslog-address': 'unix:///dev/log', 'syslog-facility': 'daemon' } },
    ],
    [
      'a remote syslog over TLS with the system trust store',
      {
        'log-driver': 'syslog',
        'log-opts': {
          'syslog-address': 'tcp+tls://logs.lab.example:6514',
          'syslog-format': 'rfc5424',
          mode: 'non-blocking',
        },
      },
    ],
    ['journald with a tag', { 'log-driver': 'journald', 'log-opts': { tag: 'pods', 'cache-max-size': '20m' } }],
    ['a named remap user and group', { 'userns-remap': 'dockremap:dockremap' }],
    ['a remap by id', { 'userns-remap': '165536' }],
    ['btrfs with its option', { 'storage-driver': 'btrfs', 'storage-opts': ['btrfs.min_space=10G'] }],
    ['no log driver', { 'log-driver': 'none' }],
  ];

  it.each(accepted)('accepts %s: daemon.json as sent, engine restarted', async (_, configJson) => {
    const before = t.replay!.calls.length;
    const r = await post(configJson);
    expect([r.status, r.json]).toEqual([200, { podImageFs: '/dev/sdc', podDataFs: '/srv/data' }]);
    expect(JSON.parse(readFileSync(t.config.paths.dockerDaemonJson, 'utf8'))).toEqual(configJson);
    expect(
      t
        .replay!.calls.slice(before)
        .map((c) => c.argv)
        .filter((a) => a[0] === SC),
    ).toEqual([
      [SC, 'daemon-reload'],
      [SC, 'restart', '--', 'docker.service'],
    ]);
  });

  /** [what, configJson, issue path under body.configJson, message] */
  const refused: [string, Record<string, unknown>, string, RegExp][] = [
    // the issue's four
    ['exec-root: /etc', { 'exec-root': '/etc' }, 'exec-root', /engine creates its state and sockets there as root/],
    [
      'a devicemapper device',
      { 'storage-opts': ['dm.directlvm_device=/dev/sda'] },
      'storage-opts.0',
      /dm\.directlvm_device=\/dev\/sda: devicemapper options name host block devices/,
    ],
    ['userns-remap: root', { 'userns-remap': 'root' }, 'userns-remap', /a remap to root .* is no remap/],
    [
      'insecure-registries: 0.0.0.0/0',
      { 'insecure-registries': ['0.0.0.0/0'] },
      'insecure-registries.0',
      /0\.0\.0\.0\/0 would mark every registry in it insecure/,
    ],
    // API sockets, binaries, host files, confinement
    ['an API socket', { hosts: ['tcp://0.0.0.0:2375'] }, 'hosts', /whoever reaches it runs containers as root/],
    ['the socket group', { group: 'users' }, 'group', /its members are root/],
    ['TLS files', { tlscacert: '/etc/shadow' }, 'tlscacert', /host file/],
    ['CORS', { 'api-cors-header': '*' }, 'api-cors-header', /web pages/],
    ['an authorization plugin', { 'authorization-plugins': ['x'] }, 'authorization-plugins', /every engine API call/],
    ['a pidfile', { pidfile: '/etc/passwd' }, 'pidfile', /writes as root/],
    ['a containerd socket', { containerd: '/tmp/evil.sock' }, 'containerd', /whatever listens there/],
    ['a shared containerd namespace', { 'containerd-namespace': 'k8s.io' }, 'containerd-namespace', /another client/],
    ['a runtime binary', { runtimes: { x: { path: '/tmp/x' } } }, 'runtimes', /runtime binary/],
    ['a default runtime', { 'default-runtime': 'x' }, 'default-runtime', /every container/],
    ['an init binary', { 'init-path': '/tmp/init' }, 'init-path', /binary/],
    ['a proxy binary', { 'userland-proxy-path': '/tmp/p' }, 'userland-proxy-path', /binary .* as root/],
    ['seccomp off', { 'seccomp-profile': 'unconfined' }, 'seccomp-profile', /seccomp/],
    ['SELinux off', { 'selinux-enabled': false }, 'selinux-enabled', /SELinux/],
    ['a cgroup parent', { 'cgroup-parent': 'system.slice' }, 'cgroup-parent', /outside the pods' limits/],
    ['real-time CPU', { 'cpu-rt-runtime': 950000 }, 'cpu-rt-runtime', /real-time/],
    ['an unkillable engine', { 'oom-score-adjust': -1000 }, 'oom-score-adjust', /killed before it/],
    ['a host bridge', { bridge: 'br0' }, 'bridge', /host interface/],
    ['a cluster store', { 'cluster-store': 'consul://x' }, 'cluster-store', /remote store/],
    ['a metrics port', { 'metrics-addr': '0.0.0.0:9323' }, 'metrics-addr', /unauthenticated/],
    ['a key left at its default', { labels: ['a=b'] }, 'labels', /not managed through the API/],
    ['an unknown key', { frobnicate: 1 }, 'frobnicate', /not a daemon\.json key the appliance knows/],
    ['a feature dockerd does not have', { features: { nosuch: true } }, 'features', /Unrecognized key/],
    // values that weaken every container or pod
    ['no-new-privileges: false', { 'no-new-privileges': false }, 'no-new-privileges', /only true/],
    ['iptables: false', { iptables: false }, 'iptables', /no longer isolated/],
    ['host cgroup namespace', { 'default-cgroupns-mode': 'host' }, 'default-cgroupns-mode', /only private/],
    ['shareable IPC', { 'default-ipc-mode': 'shareable' }, 'default-ipc-mode', /only private/],
    ['userns-remap: 0', { 'userns-remap': '0' }, 'userns-remap', /remap to root/],
    ['userns-remap: 000', { 'userns-remap': '000' }, 'userns-remap', /remap to root/],
    ['userns-remap to group root', { 'userns-remap': 'dockremap:root' }, 'userns-remap', /remap to root/],
    ['userns-remap to gid 0', { 'userns-remap': 'dockremap:0' }, 'userns-remap', /remap to root/],
    ['userns-remap with a path', { 'userns-remap': '../root' }, 'userns-remap', /user\[:group\]/],
    [
      'rtprio',
      { 'default-ulimits': { rtprio: { Name: 'rtprio', Hard: 99, Soft: 99 } } },
      'default-ulimits.rtprio',
      /real-time/,
    ],
    ['nice', { 'default-ulimits': { nice: { Name: 'nice', Hard: 40, Soft: 40 } } }, 'default-ulimits.nice', /priority/],
    [
      'a ulimit under another name',
      { 'default-ulimits': { nofile: { Name: 'rtprio', Hard: 1, Soft: 1 } } },
      'default-ulimits.nofile.Name',
      /Name must be nofile/,
    ],
    [
      'soft over hard',
      { 'default-ulimits': { nofile: { Name: 'nofile', Hard: 10, Soft: 20 } } },
      'default-ulimits.nofile',
      /Soft must not exceed Hard/,
    ],
    // storage
    ['devicemapper', { 'storage-driver': 'devicemapper' }, 'storage-driver', /devicemapper is not offered/],
    ['a thin pool', { 'storage-opts': ['dm.thinpooldev=/dev/mapper/x'] }, 'storage-opts.0', /block devices/],
    ['a ZFS dataset', { 'storage-opts': ['zfs.fsname=rpool/ROOT'] }, 'storage-opts.0', /ZFS dataset/],
    [
      'overlay mount options',
      { 'storage-opts': ['overlay2.mountopt=lowerdir=/etc'] },
      'storage-opts.0',
      /not an allowed storage option/,
    ],
    ['a size that is no size', { 'storage-opts': ['overlay2.size=lots'] }, 'storage-opts.0', /takes <size>/],
    [
      "another driver's option",
      { 'storage-driver': 'overlay2', 'storage-opts': ['btrfs.min_space=1G'] },
      'storage-opts.0',
      /option of btrfs, not of the storage driver overlay2/,
    ],
    // logging
    [
      "a socket that is not the host's syslog",
      { 'log-driver': 'syslog', 'log-opts': { 'syslog-address': 'unix:///run/docker.sock' } },
      'log-opts.syslog-address',
      /would write container output into that socket/,
    ],
    [
      'a path beside /dev/log',
      { 'log-driver': 'syslog', 'log-opts': { 'syslog-address': 'unixgram:///dev/log/../../run/docker.sock' } },
      'log-opts.syslog-address',
      /only local target is unixgram:\/\/\/dev\/log/,
    ],
    [
      'a TLS file for syslog',
      { 'log-driver': 'syslog', 'log-opts': { 'syslog-tls-ca-cert': '/etc/shadow' } },
      'log-opts.syslog-tls-ca-cert',
      /names a host file the engine reads as root/,
    ],
    [
      'a syslog option with json-file',
      { 'log-opts': { 'syslog-address': 'udp://logs:514' } },
      'log-opts.syslog-address',
      /not an option of the json-file log driver/,
    ],
    [
      'an option of no driver',
      { 'log-opts': { 'fluentd-address': 'unix:///x' } },
      'log-opts.fluentd-address',
      /not an option/,
    ],
    [
      'options with none',
      { 'log-driver': 'none', 'log-opts': { 'max-size': '1m' } },
      'log-opts.max-size',
      /takes none/,
    ],
    ['a line break in a value', { 'log-opts': { tag: 'a\nb' } }, 'log-opts.tag', /control characters/],
    ['a log driver that ships elsewhere', { 'log-driver': 'fluentd' }, 'log-driver', /json-file/],
    // registries and network values
    ['a public CIDR', { 'insecure-registries': ['8.8.0.0/16'] }, 'insecure-registries.0', /must lie in 10\.0\.0\.0\/8/],
    [
      'a private CIDR wider than /16',
      { 'insecure-registries': ['10.0.0.0/8'] },
      'insecure-registries.0',
      /\/16 or narrower/,
    ],
    ['a /15', { 'insecure-registries': ['10.0.0.0/15'] }, 'insecure-registries.0', /\/16 or narrower/],
    ['11/16 is not private', { 'insecure-registries': ['11.0.0.0/16'] }, 'insecure-registries.0', /must lie in/],
    ['172.15/16 is not private', { 'insecure-registries': ['172.15.0.0/16'] }, 'insecure-registries.0', /must lie in/],
    [
      '192.169/16 is not private',
      { 'insecure-registries': ['192.169.0.0/16'] },
      'insecure-registries.0',
      /must lie in/,
    ],
    ['172.32/16 is not private', { 'insecure-registries': ['172.32.0.0/16'] }, 'insecure-registries.0', /must lie in/],
    ['a scheme', { 'insecure-registries': ['http://reg.lab'] }, 'insecure-registries.0', /without a scheme/],
    ['Docker Hub', { 'insecure-registries': ['docker.io'] }, 'insecure-registries.0', /Docker Hub/],
    ['an IPv6 range', { 'insecure-registries': ['::/0'] }, 'insecure-registries.0', /not an IPv4 CIDR/],
    ['a wildcard', { 'insecure-registries': ['*'] }, 'insecure-registries.0', /host name, host:port/],
    ['mirror credentials', { 'registry-mirrors': ['https://u:p@mirror.lab/'] }, 'registry-mirrors.0', /credentials/],
    ['a mirror that is no URL', { 'registry-mirrors': ['ftp://mirror.lab/'] }, 'registry-mirrors.0', /http/],
    ['a DNS server that is no address', { dns: ['resolver.lab'] }, 'dns.0', /IP address/],
    ['another exec option', { 'exec-opts': ['native.umask=0000'] }, 'exec-opts.0', /native\.cgroupdriver/],
    ['a bip that is no CIDR', { bip: '172.17.0.1' }, 'bip', /IPv4 range/],
    [
      'a pool smaller than its base',
      { 'default-address-pools': [{ base: '10.10.0.0/16', size: 8 }] },
      'default-address-pools.0.size',
      /prefix length of base/,
    ],
    ['a data-root with a blank', { 'data-root': '/srv/a b' }, 'data-root', /blanks/],
    ['a data-root with ..', { 'data-root': '/srv/../etc' }, 'data-root', /\.\./],
  ];

  it.each(refused)('refuses %s: 400 naming the key, nothing run or written', async (_, configJson, key, message) => {
    const before = t.replay!.calls.length;
    const r = await post(configJson);
    expect(r.status).toBe(400);
    expect(issuePaths(r)).toEqual([`body.configJson.${key}`]);
    expect(errorOf(r).issues?.[0]?.message).toMatch(message);
    expect(t.replay!.calls.length).toBe(before);
    expect(existsSync(t.config.paths.dockerDaemonJson)).toBe(false);
  });
});

describe('data-root, resolved by the host', () => {
  let t: TestHost;
  let roots: string;
  const at = (p: string) => join(roots, p);

  beforeAll(async () => {
    roots = realpathSync(privateDir('pod-daemon-json'));
    for (const d of ['images', 'binds/engine', 'deep/binds', 'pods', 'data', 'imgfs'])
      mkdirSync(at(d), { recursive: true });
    symlinkSync(at('images'), at('to-images'));
    symlinkSync('/etc', at('to-etc'));
    symlinkSync(at('binds/engine'), at('to-binds'));
    t = await host(
      [lsblk('/dev/sdc'), findmnt(at('data')), findmnt(at('pods')), findmnt(at('imgfs')), findmnt(at('binds'))],
      { mountRoots: [roots], bindRoots: [at('binds'), at('deep/binds')], dataMountpoint: at('pods') },
    );
  });
  afterAll(async () => t?.close());
  beforeEach(() => rmSync(t.config.paths.dockerDaemonJson, { force: true }));

  const post = (configJson: Record<string, unknown>, podImageFs = '/dev/sdc', podDataFs = at('data')) =>
    t.call('POST', '/api/v2/pod/config', { body: { configJson, podImageFs, podDataFs } });
  const daemon = () => JSON.parse(readFileSync(t.config.paths.dockerDaemonJson, 'utf8')) as Record<string, unknown>;

  it('mounts the image device at a data-root under a mount root', async () => {
    expect((await post({ 'data-root': at('images') })).status).toBe(200);
    expect(daemon()).toEqual({ 'data-root': at('images') });
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toContain(
      `UUID=u-1 ${at('images')} xfs defaults,nofail 0 2 # ballast:pod-images\n`,
    );
  });

  it('writes where a symlinked data-root leads, not the link', async () => {
    expect((await post({ 'data-root': at('to-images') })).status).toBe(200);
    expect(daemon()).toEqual({ 'data-root': at('images') });
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toContain(` ${at('images')} xfs `);
    expect(readFileSync(t.config.paths.fstab, 'utf8')).not.toContain('to-images');
  });

  it('accepts a data-root naming the mounted podImageFs through a link', async () => {
    symlinkSync(at('imgfs'), at('to-imgfs'));
    expect((await post({ 'data-root': at('to-imgfs') }, at('imgfs'))).status).toBe(200);
    expect(daemon()).toEqual({ 'data-root': at('imgfs') });
  });

  const refused: [string, () => [Record<string, unknown>, string?, string?], string, RegExp][] = [
    ['a system directory', () => [{ 'data-root': '/etc' }], 'body.configJson.data-root', /never a system directory/],
    ['a link to /etc', () => [{ 'data-root': at('to-etc') }], 'body.configJson.data-root', /resolves to \/etc/],
    [
      'below /etc through a link',
      () => [{ 'data-root': at('to-etc/docker') }],
      'body.configJson.data-root',
      /resolves to \/etc\/docker/,
    ],
    [
      'a mount root itself',
      () => [{ 'data-root': roots }],
      'body.configJson.data-root',
      /strictly under the mount roots/,
    ],
    [
      'below /var/lib/docker',
      () => [{ 'data-root': '/var/lib/docker/x' }],
      'body.configJson.data-root',
      /never a system/,
    ],
    [
      'inside a bind root',
      () => [{ 'data-root': at('binds/engine') }],
      'body.configJson.data-root',
      /contain one another/,
    ],
    [
      'a link into a bind root',
      () => [{ 'data-root': at('to-binds') }],
      'body.configJson.data-root',
      /contain one another/,
    ],
    [
      'inside the pod data location',
      () => [{ 'data-root': at('pods/engine') }],
      'body.configJson.data-root',
      /contain one another/,
    ],
    [
      'inside the pod data filesystem',
      () => [{ 'data-root': at('data/engine') }],
      'body.configJson.data-root',
      /contain one another/,
    ],
    [
      'podImageFs mounted where pods keep their data',
      () => [{}, at('pods')],
      'body.podImageFs',
      /data-root .*pods and the pods' data .* contain one another/,
    ],
    ['podImageFs on a bind root', () => [{}, at('binds')], 'body.podImageFs', /contain one another/],
    [
      'a data-root other than the mounted podImageFs',
      () => [{ 'data-root': at('images') }, at('imgfs')],
      'body.configJson.data-root',
      /differs from podImageFs/,
    ],
  ];

  it.each(refused)('refuses %s and writes nothing', async (_, body, path, message) => {
    const fstab = readFileSync(t.config.paths.fstab, 'utf8');
    const before = t.replay!.calls.length;
    const [configJson, image, data] = body();
    const r = await post(configJson, image, data);
    expect([r.status, issuePaths(r)]).toEqual([400, [path]]);
    expect(errorOf(r).message).toMatch(message);
    expect(existsSync(t.config.paths.dockerDaemonJson)).toBe(false);
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toBe(fstab);
    expect(t.replay!.calls.slice(before).some((c) => c.argv[0] === SC)).toBe(false);
  });
});
