/**
 * admit() on a table of compose models, one per rule of the admission policy, each with the
 * exact issues it must raise (path and message, in order) and nothing else: the messages are what
 * an operator reads, and each case was checked by hand against the policy's intent (policy.ts,
 * handlers/pod/README.md). Allowed neighbours sit beside each refused value (`chown` beside
 * `CAP_SYS_ADMIN`, `service:a` beside `container:x`, a read-only bind beside `/etc`), so a rule
 * that refuses too much fails as surely as one that refuses too little.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { podSettings } from '../../handlers/pod/contract';
import { admit } from '../../runtime/areas/pod/admission/admit';
import { privateDir } from '../helpers/tmp';

const podDir = join(privateDir('pod-admit-table'), 'srv/pods/p1');
mkdirSync(join(podDir, 'data'), { recursive: true });
const settings = podSettings.parse({});
const run = (model: Record<string, unknown>, s = settings) =>
  admit(model, { project: 'p1', podDir, settings: s, mode: 'store' });

const TABLE: [string, Record<string, unknown>, [string, string][]][] = [
  [
    'top keys',
    { services: {}, include: ['x.yml'], bogus: 1, 'x-ok': 1, name: 'other' },
    [
      ['fileContents.include', 'include: other compose files cannot be included; put the services in this file'],
      ['fileContents.bogus', 'is not a top-level key the appliance admits'],
      ['fileContents.name', "the project name is the pod's own (p1), not other"],
    ],
  ],
  [
    'network keys',
    {
      networks: {
        n: {
          external: true,
          name: 'host',
          driver: 'macvlan',
          driver_opts: { parent: 'eth0' },
          ipam: { driver: 'dhcp' },
          bad: 1,
          'x-e': 1,
        },
      },
    },
    [
      ['fileContents.networks.n.bad', 'is not a network key the appliance admits'],
      ['fileContents.networks.n.external', 'external networks are not allowed: a pod joins only its own networks'],
      [
        'fileContents.networks.n.name',
        "a pod's network is named by the engine (p1_n); another name may be another pod's or the host's",
      ],
      [
        'fileContents.networks.n.driver',
        'network driver macvlan is not allowed (bridge only: others attach to host interfaces; no setting admits them)',
      ],
      [
        'fileContents.networks.n.driver_opts',
        'network driver options are not allowed (they name host bridges and interfaces)',
      ],
      ['fileContents.networks.n.ipam.driver', 'only the default IPAM driver is allowed'],
    ],
  ],
  [
    'network ok',
    {
      networks: {
        n: { external: false, name: 'p1_n', driver: 'bridge', driver_opts: {}, ipam: { driver: 'default' } },
      },
    },
    [],
  ],
  [
    'volume keys',
    { volumes: { v: { external: 'yes', name: 'other', driver: 'nfs', bad: 1 } } },
    [
      ['fileContents.volumes.v.bad', 'is not a volume key the appliance admits'],
      ['fileContents.volumes.v.external', 'external volumes are not allowed: a pod uses only its own volumes'],
      [
        'fileContents.volumes.v.name',
        "a pod's volume is named by the engine (p1_v); another name may be another pod's",
      ],
      ['fileContents.volumes.v.driver', 'only the local volume driver is allowed'],
    ],
  ],
  [
    'volume bind opts',
    {
      volumes: {
        v: { driver_opts: { type: 'none', o: 'bind,nosuid', device: './data' } },
        w: { driver_opts: { type: 'nfs', o: 'addr=1.2.3.4', device: ':/x' } },
        t: { driver_opts: { type: 'tmpfs', o: 'size=1m' } },
        e: { driver_opts: {} },
      },
    },
    [
      ['fileContents.volumes.v.driver_opts.o', 'bind options nosuid are not allowed (bind, rbind, ro, rw)'],
      [
        'fileContents.volumes.w.driver_opts',
        'a volume that mounts nfs (type, o, device) is not allowed: only tmpfs, or a bind of a path in the pod directory (type: none, o: bind); no setting admits others',
      ],
    ],
  ],
  [
    'secrets',
    {
      secrets: {
        s: { driver: 'x', driver_opts: {}, template_driver: 't', external: true, environment: 'HOME', bad: 1 },
      },
      configs: { c: { file: './data/c' } },
    },
    [
      ['fileContents.secrets.s.bad', 'is not a secrets key the appliance admits'],
      ['fileContents.secrets.s.driver', 'driver is not allowed (swarm-only drivers)'],
      ['fileContents.secrets.s.driver_opts', 'driver_opts is not allowed (swarm-only drivers)'],
      ['fileContents.secrets.s.template_driver', 'template_driver is not allowed (swarm-only drivers)'],
      ['fileContents.secrets.s.external', 'external secrets are not allowed'],
      [
        'fileContents.secrets.s.environment',
        "the host's environment is not handed to pods; put the value in a file in the pod directory",
      ],
    ],
  ],
  [
    'service keys',
    {
      services: {
        a: {
          image: 'busybox',
          bogus: 1,
          'x-ok': 1,
          privileged: 'maybe',
          cap_add: ['CAP_SYS_ADMIN', 'chown', 'NET_RAW'],
          devices: ['/dev/sda'],
          blkio_config: { weight: 10, device_read_bps: [] },
          security_opt: ['no-new-privileges:true', 'seccomp=unconfined'],
          sysctls: ['net.ipv4.ip_forward=1', 'net.ipv4.ip_unprivileged_port_start=0'],
        },
      },
    },
    [
      ['fileContents.services.a.bogus', 'is not a service key the appliance admits'],
      ['fileContents.services.a.privileged', 'must be true or false'],
      [
        'fileContents.services.a.cap_add.0',
        'capability CAP_SYS_ADMIN is not allowed (settings.pod.allow.capabilities, root-equivalent)',
      ],
      [
        'fileContents.services.a.cap_add.2',
        'capability NET_RAW is not allowed (settings.pod.allow.capabilities, root-equivalent)',
      ],
      ['fileContents.services.a.devices', 'host devices are not allowed (settings.pod.allow.devices, root-equivalent)'],
      [
        'fileContents.services.a.blkio_config.device_read_bps',
        'per-device I/O settings name host devices (settings.pod.allow.devices, root-equivalent)',
      ],
      [
        'fileContents.services.a.security_opt.1',
        'security option seccomp=unconfined is not allowed: only no-new-privileges (others turn confinement off or name host profiles) (settings.pod.allow.privileged, root-equivalent)',
      ],
      [
        'fileContents.services.a.sysctls.net.ipv4.ip_forward',
        'sysctl net.ipv4.ip_forward is not one of the safe, namespaced ones (settings.pod.allow.sysctls, root-equivalent)',
      ],
    ],
  ],
  [
    'service privileged',
    { services: { a: { privileged: true, sysctls: { 'kernel.shmmax': 1 } } } },
    [
      [
        'fileContents.services.a.privileged',
        'privileged containers are not allowed (settings.pod.allow.privileged, root-equivalent)',
      ],
      [
        'fileContents.services.a.sysctls.kernel.shmmax',
        'sysctl kernel.shmmax is not one of the safe, namespaced ones (settings.pod.allow.sysctls, root-equivalent)',
      ],
    ],
  ],
  [
    'namespaces',
    {
      services: {
        a: {
          network_mode: 'host',
          pid: 'container:x',
          ipc: 'weird',
          uts: 'host',
          userns_mode: 'service:a',
          cgroup: 'host',
        },
        b: { network_mode: 'service:a', ipc: 'shareable', pid: 'service:a' },
      },
    },
    [
      [
        'fileContents.services.a.network_mode',
        'network_mode: host is not allowed (settings.pod.allow.hostNetwork, root-equivalent)',
      ],
      ['fileContents.services.a.pid', 'pid: container:x joins a container outside the pod (pods stay apart)'],
      [
        'fileContents.services.a.ipc',
        'ipc: weird is not allowed (private, shareable, none, service:<a service of this pod>)',
      ],
      ['fileContents.services.a.uts', 'uts: host is not allowed (settings.pod.allow.hostNamespaces, root-equivalent)'],
      ['fileContents.services.a.userns_mode', 'userns_mode: service:a is not allowed (leave it out)'],
      [
        'fileContents.services.a.cgroup',
        'cgroup: host is not allowed (settings.pod.allow.hostNamespaces, root-equivalent)',
      ],
    ],
  ],
  [
    'volumes',
    {
      services: {
        a: {
          volumes: [
            './data:/d:ro',
            '/etc:/e',
            'named:/n',
            '/anon',
            './data:/s:rshared',
            { type: 'bind', source: './data', target: '/t', bind: { propagation: 'shared' } },
            { type: 'npipe', source: 'x', target: '/y' },
            { type: 'volume', source: 'v', target: '/z' },
          ],
        },
      },
    },
    [
      [
        'fileContents.services.a.volumes.1',
        `bind source /etc is outside the pod's data directory ${podDir} and settings.pod.bindRoots`,
      ],
      [
        'fileContents.services.a.volumes.4',
        'shared mount propagation is not allowed (mounts made in the container would reach the host)',
      ],
      [
        'fileContents.services.a.volumes.5.bind.propagation',
        'shared mount propagation is not allowed (mounts made in the container would reach the host)',
      ],
      ['fileContents.services.a.volumes.6.type', 'volume type npipe is not allowed (bind, volume, tmpfs)'],
    ],
  ],
  [
    'volumes_from links',
    { services: { a: { volumes_from: ['service:b:ro', 'other', 'container:c'], links: ['b:alias', 'zz'] }, b: {} } },
    [
      [
        'fileContents.services.a.volumes_from.1',
        'volumes_from other: only services of this pod (containers of other pods stay apart)',
      ],
      [
        'fileContents.services.a.volumes_from.2',
        'volumes_from container:c: only services of this pod (containers of other pods stay apart)',
      ],
      ['fileContents.services.a.links.1', 'link zz: only services of this pod'],
    ],
  ],
  [
    'env',
    {
      services: {
        a: { env_file: ['./data/e', { path: '/etc/passwd' }], environment: ['A=1', 'HOME'] },
        b: { env_file: './data/e', environment: { X: null, Y: '1' } },
      },
    },
    [
      [
        'fileContents.services.a.env_file.1.path',
        `env_file /etc/passwd is outside the pod's data directory ${podDir} and settings.pod.bindRoots`,
      ],
      [
        'fileContents.services.a.environment.1',
        "HOME has no value: compose would copy it from the host's environment; give a value",
      ],
      [
        'fileContents.services.b.environment.X',
        "X has no value: compose would copy it from the host's environment; give a value",
      ],
    ],
  ],
  [
    'build',
    {
      services: {
        a: {
          build: {
            context: './data',
            dockerfile: '../x',
            network: 'host',
            cache_from: ['type=local,src=/x', 'img'],
            bogus: 1,
          },
        },
        b: { build: 'https://example.com/x.git' },
        c: { build: '/etc' },
      },
    },
    [
      ['fileContents.services.a.build.bogus', 'is not a build key the appliance admits'],
      [
        'fileContents.services.a.build.dockerfile',
        'the Dockerfile is named inside the build context (relative, no ..)',
      ],
      ['fileContents.services.a.build.network', 'build network host is not allowed (default, none)'],
      ['fileContents.services.a.build.cache_from.0', 'a local build cache is a host path'],
      [
        'fileContents.services.c.build',
        `build context /etc is outside the pod's data directory ${podDir} and settings.pod.bindRoots`,
      ],
    ],
  ],
  [
    'extends container_name logging',
    {
      services: {
        a: {
          extends: { file: 'x.yml', service: 'b' },
          container_name: 'p1-a',
          logging: { driver: 'gelf', options: { 'syslog-address': 'file:///x', bogus: 1 }, extra: 1 },
        },
        b: { container_name: 'zz', logging: { driver: 'syslog', options: { 'syslog-address': 'unix:///x' } } },
      },
    },
    [
      [
        'fileContents.services.a.extends.file',
        'extends may name a service of this file only: another file is read at every start, unchecked',
      ],
      ['fileContents.services.a.logging.extra', 'is not a logging key'],
      [
        'fileContents.services.a.logging.driver',
        'log driver gelf is not allowed (json-file, local, journald, syslog, none)',
      ],
      [
        'fileContents.services.a.logging.options.syslog-address',
        'syslog-address: udp://host:port, tcp://host:port or unix:///dev/log',
      ],
      [
        'fileContents.services.a.logging.options.bogus',
        'is not a log option the appliance admits (none naming host files)',
      ],
      [
        'fileContents.services.b.container_name',
        "a container is named p1-b or by the engine (another name may be another pod's)",
      ],
      [
        'fileContents.services.b.logging.options.syslog-address',
        'syslog-address: udp://host:port, tcp://host:port or unix:///dev/log',
      ],
    ],
  ],
  [
    'deploy storage oom',
    {
      services: {
        a: {
          deploy: { resources: { reservations: { devices: [{ capabilities: ['gpu'] }] } } },
          storage_opt: { size: '1G', 'dm.basesize': 'x' },
          oom_score_adj: -5,
          oom_kill_disable: 'yes',
        },
        b: { oom_score_adj: '0', oom_kill_disable: false, deploy: { resources: { reservations: { devices: [] } } } },
      },
    },
    [
      [
        'fileContents.services.a.deploy.resources.reservations.devices',
        'host devices are not allowed (settings.pod.allow.devices, root-equivalent)',
      ],
      ['fileContents.services.a.storage_opt.dm.basesize', 'only the size storage option is allowed'],
      [
        'fileContents.services.a.oom_score_adj',
        "must be 0 or more: a container never outlives the host's own processes when memory runs out",
      ],
      [
        'fileContents.services.a.oom_kill_disable',
        'the OOM killer stays on for containers (one that cannot be killed can take the host down)',
      ],
      [
        'fileContents.services.b.oom_score_adj',
        "must be 0 or more: a container never outlives the host's own processes when memory runs out",
      ],
    ],
  ],
];

describe('admit: each rule, its exact issues', () => {
  it.each(TABLE)('%s', (_name, model, issues) => {
    expect(run(structuredClone(model)).issues.map((i) => [i.path, i.message])).toEqual(issues);
  });

  it('stores host paths resolved, and leaves named, anonymous and remote sources as they are', () => {
    const { model } = run(structuredClone(TABLE.find(([n]) => n === 'volumes')![1]));
    const services = model.services as Record<string, Record<string, unknown>>;
    expect(services.a.volumes).toEqual([
      `${podDir}/data:/d:ro`,
      '/etc:/e',
      'named:/n',
      '/anon',
      `${podDir}/data:/s:rshared`,
      { type: 'bind', source: `${podDir}/data`, target: '/t', bind: { propagation: 'shared' } },
      { type: 'npipe', source: 'x', target: '/y' },
      { type: 'volume', source: 'v', target: '/z' },
    ]);
    const env = run(structuredClone(TABLE.find(([n]) => n === 'env')![1])).model.services as Record<
      string,
      Record<string, unknown>
    >;
    expect(env.a.env_file).toEqual([`${podDir}/data/e`, { path: '/etc/passwd' }]);
    expect(env.b.env_file).toBe(`${podDir}/data/e`);
    const built = run(structuredClone(TABLE.find(([n]) => n === 'build')![1])).model.services as Record<
      string,
      Record<string, unknown>
    >;
    expect([(built.a.build as { context: string }).context, built.b.build, built.c.build]).toEqual([
      `${podDir}/data`,
      'https://example.com/x.git',
      '/etc',
    ]);
    const vols = run(structuredClone(TABLE.find(([n]) => n === 'volume bind opts')![1])).model.volumes as Record<
      string,
      { driver_opts: Record<string, string> }
    >;
    expect(vols.v.driver_opts.device).toBe(`${podDir}/data`);
  });

  it('the client model is not changed; the stored one is a copy', () => {
    const model = { services: { a: { volumes: ['./data:/d'] } } };
    const r = run(model);
    expect(model.services.a.volumes).toEqual(['./data:/d']);
    expect((r.model.services as { a: { volumes: string[] } }).a.volumes).toEqual([`${podDir}/data:/d`]);
  });

  it('what the settings allow is admitted, and only that', () => {
    const allow = { ...settings.allow, privileged: true, devices: true, hostNetwork: true, hostNamespaces: true };
    const wide = { ...settings, allow: { ...allow, capabilities: ['cap_sys_admin'], sysctls: ['kernel.shmmax'] } };
    const model = {
      networks: { n: { driver: 'macvlan' } },
      services: {
        a: {
          privileged: true,
          cap_add: ['SYS_ADMIN', 'NET_ADMIN'],
          devices: ['/dev/sda'],
          blkio_config: { device_read_bps: [] },
          security_opt: ['seccomp=unconfined'],
          sysctls: { 'kernel.shmmax': 1, 'kernel.msgmax': 1 },
          network_mode: 'host',
          pid: 'host',
          deploy: { resources: { reservations: { devices: [{ capabilities: ['gpu'] }] } } },
        },
      },
    };
    expect(run(model, wide).issues.map((i) => [i.path, i.message])).toEqual([
      [
        'fileContents.networks.n.driver',
        'network driver macvlan is not allowed (bridge only: others attach to host interfaces; no setting admits them)',
      ],
      [
        'fileContents.services.a.cap_add.1',
        'capability NET_ADMIN is not allowed (settings.pod.allow.capabilities, root-equivalent)',
      ],
      [
        'fileContents.services.a.sysctls.kernel.msgmax',
        'sysctl kernel.msgmax is not one of the safe, namespaced ones (settings.pod.allow.sysctls, root-equivalent)',
      ],
    ]);
  });
});
