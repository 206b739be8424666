/**
 * What a `pod:manage` token may write into the engine's daemon.json (POST /pod/config). dockerd
 * runs as root and reads this file at start, so the policy is one table over dockerd 20.10's
 * daemon.json keys (Linux): each key is allowed with a typed, checked value, or refused with the
 * reason; a key the table does not name is refused too. Decisions and reasons: the pod README,
 * "Container system configuration". `data-root` is typed here and confined by the route (the
 * host resolves it).
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';

const CONTROL = /[\u0000-\u001f\u007f]/;
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters');

/** docker's units.RAMInBytes / FromHumanSize: `10m`, `1.5GB`, `512KiB`. */
const SIZE = /^[0-9]{1,15}(\.[0-9]{1,6})? ?[kKmMgGtTpP]?[iI]?[bB]?$/;
/** Go's strconv.ParseBool. */
const GO_BOOL = /^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/;
const COUNT = /^[1-9][0-9]{0,5}$/;
const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}(:|$))${LABEL}(\\.${LABEL})*$`);
const PORT = /^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$/;

/** `host` or `host:port`, a DNS name or a dotted IPv4 address (no IPv6 literal, no scheme). */
function hostPort(s: string): boolean {
  const i = s.lastIndexOf(':');
  const [h, p] = i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
  return HOST_NAME.test(h) && (p === undefined || PORT.test(p));
}

/** An IPv4 CIDR as [network as a 32-bit number, prefix length], or null. */
function cidr4(s: string): [number, number] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(s);
  if (!m) return null;
  const o = m.slice(1, 5).map(Number);
  const len = Number(m[5]);
  if (o.some((x) => x > 255) || len > 32) return null;
  return [((o[0] << 24) | (o[1] << 16) | (o[2] << 8) | o[3]) >>> 0, len];
}
const PRIVATE_V4: [number, number][] = [
  [0x0a000000, 8], // 10.0.0.0/8
  [0xac100000, 12], // 172.16.0.0/12
  [0xc0a80000, 16], // 192.168.0.0/16
];
const inNet = ([a, len]: [number, number], [net, netLen]: [number, number]) =>
  len >= netLen && (netLen === 0 || a >>> (32 - netLen) === net >>> (32 - netLen));

/** The narrowest CIDR an insecure registry entry may name (a /16 or longer prefix). */
const INSECURE_MIN_PREFIX = 16;
const OFFICIAL_REGISTRY = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/**
 * An insecure registry (no TLS verification, plain HTTP allowed): a host name or address with an
 * optional port, or a CIDR of at most /16 inside the private IPv4 ranges. A wider CIDR
 * (`0.0.0.0/0`) would let whoever sits on the path serve any image by address.
 */
const insecureRegistry = z.string().superRefine((s, ctx) => {
  const bad = (message: string) => ctx.addIssue({ code: 'custom', message, input: s });
  if (CONTROL.test(s) || s.length > 260) return bad('must be a host name, host:port or a private CIDR');
  if (s.includes('://')) return bad(`${s}: a registry is named without a scheme (host or host:port)`);
  if (s.includes('/')) {
    const c = cidr4(s);
    if (!c) return bad(`${s}: not an IPv4 CIDR (a.b.c.d/n)`);
    if (c[1] < INSECURE_MIN_PREFIX || !PRIVATE_V4.some((net) => inNet(c, net)))
      return bad(
        `${s} would mark every registry in it insecure (no TLS verification): a CIDR must lie in 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 and be /${INSECURE_MIN_PREFIX} or narrower; name single registries as host or host:port`,
      );
    return;
  }
  if (!hostPort(s)) return bad(`${s}: must be a host name, host:port or a private CIDR`);
  if (OFFICIAL_REGISTRY.has(s.replace(/:[0-9]+$/, '').toLowerCase()))
    return bad(`${s}: Docker Hub is never pulled from without TLS verification`);
});

/** A registry mirror: an http(s) URL without credentials, query or fragment. */
const registryMirror = z.string().superRefine((s, ctx) => {
  const bad = (message: string) => ctx.addIssue({ code: 'custom', message, input: s });
  let u: URL;
  try {
    if (CONTROL.test(s) || s.length > 2048) throw new Error();
    u = new URL(s);
  } catch {
    return bad('must be an http:// or https:// URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return bad(`${s}: must be an http:// or https:// URL`);
  if (u.username !== '' || u.password !== '')
    return bad('a mirror URL may not carry credentials (they would be stored and shown in clear)');
  if (u.search !== '' || u.hash !== '' || s.includes('?') || s.includes('#'))
    return bad(`${s}: a mirror URL has no query or fragment`);
});

// ---- storage -----------------------------------------------------------------------------

/**
 * Storage drivers the appliance runs. devicemapper (deprecated in 20.10) is not one: its options
 * name host block devices and thin pools.
 */
const STORAGE_DRIVERS = ['overlay2', 'fuse-overlayfs', 'btrfs', 'zfs', 'vfs'] as const;

/** `<option>=<value>` pairs the engine may be given, each with its value's form. */
const STORAGE_OPTS: Record<string, { value: RegExp; form: string }> = {
  'overlay2.size': { value: SIZE, form: '<size>' },
  'overlay2.override_kernel_check': { value: GO_BOOL, form: '<bool>' },
  'btrfs.min_space': { value: SIZE, form: '<size>' },
};
const STORAGE_OPTS_REFUSED: [RegExp, string][] = [
  [
    /^dm\./,
    'devicemapper options name host block devices and thin pools, which the engine takes over and formats as root',
  ],
  [/^zfs\.fsname$/, 'names a host ZFS dataset the engine creates and destroys datasets under'],
];
const storageOptsAllowed = Object.entries(STORAGE_OPTS)
  .map(([k, v]) => `${k}=${v.form}`)
  .join(', ');

const storageOpt = z.string().superRefine((s, ctx) => {
  const bad = (message: string) => ctx.addIssue({ code: 'custom', message, input: s });
  const eq = s.indexOf('=');
  const name = (eq < 0 ? s : s.slice(0, eq)).trim().toLowerCase();
  const value = eq < 0 ? '' : s.slice(eq + 1).trim();
  const refused = STORAGE_OPTS_REFUSED.find(([re]) => re.test(name));
  if (refused) return bad(`${s}: ${refused[1]}`);
  const known = STORAGE_OPTS[name];
  if (!known) return bad(`${s} is not an allowed storage option (allowed: ${storageOptsAllowed})`);
  if (!known.value.test(value)) return bad(`${s}: ${name} takes ${known.form}`);
});
const storageOptDriver = (s: string) => s.slice(0, s.indexOf('.')).trim().toLowerCase();

// ---- logging -----------------------------------------------------------------------------

const LOG_DRIVERS = ['json-file', 'local', 'journald', 'syslog', 'none'] as const;
type LogDriver = (typeof LOG_DRIVERS)[number];

const SYSLOG_FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  ...Array.from({ length: 8 }, (_, i) => `local${i}`),
];
/** The only unix socket the engine may write container output to: the host's syslog. */
const SYSLOG_SOCKET = '/dev/log';

function syslogAddress(s: string): string | null {
  const m = /^([a-z+]+):\/\/(.*)$/.exec(s);
  if (!m) return 'must be udp://host:port, tcp://host:port, tcp+tls://host:port or unix:///dev/log';
  const [, scheme, rest] = m;
  if (scheme === 'unix' || scheme === 'unixgram')
    return rest === SYSLOG_SOCKET
      ? null
      : `${s}: the engine (root) would write container output into that socket; the only local target is ${scheme}://${SYSLOG_SOCKET}`;
  if (scheme !== 'udp' && scheme !== 'tcp' && scheme !== 'tcp+tls') return `${s}: unknown scheme ${scheme}`;
  return hostPort(rest) ? null : `${s}: must be ${scheme}://host[:port]`;
}

const HOST_FILE =
  'names a host file the engine reads as root: not settable through the API (use tcp+tls:// with the system trust store, or unix:///dev/log)';

/** Each log option: a check of its value (null: fine, else why not), or the reason it is refused. */
const LOG_OPTS: Record<string, ((v: string) => string | null) | { refused: string }> = {
  'max-size': (v) => (SIZE.test(v) ? null : 'a size such as 10m'),
  'max-file': (v) => (COUNT.test(v) ? null : 'a positive whole number'),
  compress: (v) => (GO_BOOL.test(v) ? null : 'true or false'),
  tag: (v) => (v.length <= 256 ? null : 'at most 256 characters'),
  labels: (v) => (/^[A-Za-z0-9_./-]{1,128}(,[A-Za-z0-9_./-]{1,128}){0,63}$/.test(v) ? null : 'comma-separated names'),
  env: (v) =>
    /^[A-Za-z_][A-Za-z0-9_]{0,127}(,[A-Za-z_][A-Za-z0-9_]{0,127}){0,63}$/.test(v) ? null : 'comma-separated names',
  'labels-regex': (v) => (v.length <= 256 ? null : 'at most 256 characters'),
  'env-regex': (v) => (v.length <= 256 ? null : 'at most 256 characters'),
  'syslog-address': syslogAddress,
  'syslog-facility': (v) => (SYSLOG_FACILITIES.includes(v) ? null : `one of ${SYSLOG_FACILITIES.join(', ')}`),
  'syslog-format': (v) =>
    ['rfc3164', 'rfc5424', 'rfc5424micro'].includes(v) ? null : 'rfc3164, rfc5424 or rfc5424micro',
  'syslog-tls-skip-verify': (v) => (GO_BOOL.test(v) ? null : 'true or false'),
  'syslog-tls-ca-cert': { refused: HOST_FILE },
  'syslog-tls-cert': { refused: HOST_FILE },
  'syslog-tls-key': { refused: HOST_FILE },
  mode: (v) => (v === 'blocking' || v === 'non-blocking' ? null : 'blocking or non-blocking'),
  'max-buffer-size': (v) => (SIZE.test(v) ? null : 'a size such as 4m'),
  'cache-disabled': (v) => (GO_BOOL.test(v) ? null : 'true or false'),
  'cache-max-size': (v) => (SIZE.test(v) ? null : 'a size such as 20m'),
  'cache-max-file': (v) => (COUNT.test(v) ? null : 'a positive whole number'),
  'cache-compress': (v) => (GO_BOOL.test(v) ? null : 'true or false'),
};
/** Options every driver that keeps logs takes (delivery mode, dual-logging cache). */
const ANY_DRIVER = ['mode', 'max-buffer-size', 'cache-disabled', 'cache-max-size', 'cache-max-file', 'cache-compress'];
const TAGS = ['tag', 'labels', 'labels-regex', 'env', 'env-regex'];
/** Options per log driver (dockerd 20.10's validators). */
const LOG_OPTS_OF: Record<LogDriver, readonly string[]> = {
  'json-file': ['max-size', 'max-file', 'compress', ...TAGS, ...ANY_DRIVER],
  local: ['max-size', 'max-file', 'compress', ...ANY_DRIVER],
  journald: [...TAGS, ...ANY_DRIVER],
  syslog: [
    'syslog-address',
    'syslog-facility',
    'syslog-format',
    'syslog-tls-skip-verify',
    'syslog-tls-ca-cert',
    'syslog-tls-cert',
    'syslog-tls-key',
    ...TAGS,
    ...ANY_DRIVER,
  ],
  none: [],
};

// ---- limits ------------------------------------------------------------------------------

/** ulimits containers may get by default; rtprio and nice are refused (see REFUSED_ULIMITS). */
const ULIMITS = [
  'core',
  'cpu',
  'data',
  'fsize',
  'locks',
  'memlock',
  'msgqueue',
  'nofile',
  'nproc',
  'rss',
  'rttime',
  'sigpending',
  'stack',
] as const;
const REFUSED_ULIMITS: Record<string, string> = {
  rtprio: 'lets containers run real-time and starve the host and other pods of CPU',
  nice: "lets containers raise their scheduling priority over the host's and other pods'",
};
const limit = z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER);
const ulimit = (name: string) =>
  z
    .strictObject({ Name: z.literal(name, { error: `Name must be ${name}` }), Hard: limit, Soft: limit })
    .refine((u) => u.Hard === -1 || (u.Soft !== -1 && u.Soft <= u.Hard), 'Soft must not exceed Hard (-1: unlimited)');

// ---- the table ---------------------------------------------------------------------------

const refused = (why: string) => z.never({ error: why }).optional();
const notManaged = refused('not managed through the API: the engine default applies');
const unknownKey = (what: string) =>
  z
    .unknown()
    .refine(() => false, { error: what })
    .meta({ not: {} });

const defaultUlimits = z
  .object({
    ...Object.fromEntries(ULIMITS.map((n) => [n, ulimit(n).optional()])),
    ...Object.fromEntries(Object.entries(REFUSED_ULIMITS).map(([n, why]) => [n, refused(why)])),
  })
  .catchall(unknownKey(`not a ulimit name (${ULIMITS.join(', ')})`));

const addressPool = z
  .strictObject({ base: z.cidrv4(), size: z.number().int().min(1).max(32) })
  .refine((p) => p.size >= Number(p.base.split('/')[1]), {
    error: 'size must be at least the prefix length of base',
    path: ['size'],
  });

const ALLOWED = {
  /** typed here; the route resolves it on the host and confines it */
  'data-root': absolutePath.refine((p) => !/[\s\\#]/.test(p), 'must not contain blanks, backslashes or #').optional(),
  'storage-driver': z
    .enum(STORAGE_DRIVERS, {
      error: `one of ${STORAGE_DRIVERS.join(', ')} (devicemapper is not offered: its options name host block devices)`,
    })
    .optional(),
  'storage-opts': z.array(storageOpt).max(16).optional(),
  'log-driver': z.enum(LOG_DRIVERS).optional(),
  'log-opts': z.record(z.string().max(64), text(1024)).optional(),
  'log-level': z.enum(['debug', 'info', 'warn', 'error', 'fatal']).optional(),
  'live-restore': z.boolean().optional(),
  'default-address-pools': z.array(addressPool).max(64).optional(),
  bip: z.cidrv4().optional(),
  mtu: z.number().int().min(68).max(65535).optional(),
  dns: z
    .array(z.union([z.ipv4(), z.ipv6()], { error: 'must be an IP address' }))
    .max(8)
    .optional(),
  'dns-search': z.array(z.string().regex(HOST_NAME, 'must be a domain name')).max(6).optional(),
  'dns-opts': z
    .array(z.string().regex(/^[a-z0-9-]{1,32}(:[0-9]{1,5})?$/, 'a resolv.conf option such as ndots:2'))
    .max(16)
    .optional(),
  'registry-mirrors': z.array(registryMirror).max(16).optional(),
  'insecure-registries': z.array(insecureRegistry).max(64).optional(),
  'max-concurrent-downloads': z.number().int().min(1).max(64).optional(),
  'max-concurrent-uploads': z.number().int().min(1).max(64).optional(),
  'max-download-attempts': z.number().int().min(1).max(64).optional(),
  'shutdown-timeout': z.number().int().min(0).max(3600).optional(),
  'exec-opts': z
    .array(
      z.enum(['native.cgroupdriver=systemd', 'native.cgroupdriver=cgroupfs'], {
        error: 'the only exec option is native.cgroupdriver=systemd|cgroupfs',
      }),
    )
    .max(1)
    .optional(),
  'default-ulimits': defaultUlimits.optional(),
  'default-cgroupns-mode': z
    .literal('private', { error: "only private: host shows every container the host's cgroup tree" })
    .optional(),
  'default-ipc-mode': z
    .literal('private', { error: "only private: shareable lets another pod's containers join the IPC namespace" })
    .optional(),
  init: z.boolean().optional(),
  // network policy: icc only concerns the default bridge (pods get their own networks) and may go
  // either way; iptables holds the rules that keep pod networks apart, so it stays on
  icc: z.boolean().optional(),
  iptables: z
    .literal(true, {
      error: "only true: without the engine's iptables rules pod networks are no longer isolated from each other",
    })
    .optional(),
  ip6tables: z.boolean().optional(),
  'ip-forward': z.boolean().optional(),
  'ip-masq': z.boolean().optional(),
  ipv6: z.boolean().optional(),
  'userland-proxy': z.boolean().optional(),
  'no-new-privileges': z.literal(true, { error: "only true (omit the key for the engine's default)" }).optional(),
  'userns-remap': z
    .string()
    .regex(
      /^(default|([a-z_][a-z0-9_-]{0,31}|[0-9]{1,10})(:([a-z_][a-z0-9_-]{0,31}|[0-9]{1,10}))?)$/,
      'default, or user[:group] (names or ids)',
    )
    .refine(
      (s) => !s.split(':').some((p) => p === 'root' || /^0+$/.test(p)),
      'a remap to root (user or group root/0) is no remap: use default or a dedicated user',
    )
    .optional(),
  debug: z.boolean().optional(),
  experimental: z.boolean().optional(),
  features: z.strictObject({ buildkit: z.boolean().optional() }).optional(),
};

/** Keys dockerd 20.10 reads that the API never writes: each hands out root or another pod's isolation. */
const REFUSED = {
  hosts: 'an engine API socket: whoever reaches it runs containers as root on the host',
  group: 'the group owning the engine API socket: its members are root on the host',
  tls: 'TLS of an engine API socket, which the API never opens',
  tlsverify: 'TLS of an engine API socket, which the API never opens',
  tlscacert: 'a host file for an engine API socket, which the API never opens',
  tlscert: 'a host file for an engine API socket, which the API never opens',
  tlskey: 'a host file for an engine API socket, which the API never opens',
  'api-cors-header': 'lets web pages call an engine API socket',
  'authorization-plugins': 'a plugin that decides every engine API call',
  'exec-root': 'the engine creates its state and sockets there as root: the default (/var/run/docker) applies',
  pidfile: 'a host file the engine writes as root',
  containerd: 'a containerd socket: the engine would run containers through whatever listens there',
  'containerd-namespace': "sharing a containerd namespace mixes the engine's containers with another client's",
  'containerd-plugin-namespace': "sharing a containerd namespace mixes the engine's plugins with another client's",
  runtimes: 'a runtime binary the engine runs as root for containers',
  'default-runtime': 'the runtime the engine runs as root for every container',
  'init-path': 'a binary the engine puts into every container as its init',
  'userland-proxy-path': 'a binary the engine runs as root for every published port',
  'seccomp-profile': 'a host file (or unconfined) that sets every container’s seccomp filter',
  'selinux-enabled': "the host's SELinux confinement of containers is not the API's to switch",
  'cgroup-parent': "places every container's cgroup anywhere in the host's tree, outside the pods' limits",
  'cpu-rt-period': 'real-time CPU time for containers, taken from the host and other pods',
  'cpu-rt-runtime': 'real-time CPU time for containers, taken from the host and other pods',
  'oom-score-adjust': "the engine's own OOM score: the host's services would be killed before it",
  bridge: "attaches containers to a host interface, outside the engine's NAT and isolation",
  'cluster-store': "a remote store that defines the engine's networks",
  'cluster-advertise': "a remote store that defines the engine's networks",
  'cluster-store-opts': 'options (host TLS files) of a remote store',
  'metrics-addr': 'opens an unauthenticated engine metrics endpoint',
  'network-diagnostic-port': 'opens an unauthenticated network diagnostics endpoint',
};

/** Keys dockerd 20.10 reads that the appliance leaves at the engine's default. */
const NOT_MANAGED = [
  'allow-nondistributable-artifacts',
  'builder',
  'default-gateway',
  'default-gateway-v6',
  'default-shm-size',
  'fixed-cidr',
  'fixed-cidr-v6',
  'graph',
  'host-gateway-ip',
  'ip',
  'labels',
  'node-generic-resources',
  'raw-logs',
  'rootless',
  'swarm-default-advertise-addr',
] as const;

/** The keys of daemon.json the API writes, each with its checked value (README "Container system configuration"). */
export const daemonJson = z
  .object({
    ...ALLOWED,
    ...(Object.fromEntries(Object.entries(REFUSED).map(([k, why]) => [k, refused(why)])) as Record<
      keyof typeof REFUSED,
      ReturnType<typeof refused>
    >),
    ...(Object.fromEntries(NOT_MANAGED.map((k) => [k, notManaged])) as Record<
      (typeof NOT_MANAGED)[number],
      typeof notManaged
    >),
  })
  .catchall(unknownKey('not a daemon.json key the appliance knows (dockerd 20.10)'))
  .superRefine((d, ctx) => {
    // options must belong to the driver that will read them; the engine would not start otherwise
    const storage = d['storage-driver'];
    (d['storage-opts'] ?? []).forEach((o, i) => {
      if (storage !== undefined && storageOptDriver(o) !== storage)
        ctx.addIssue({
          code: 'custom',
          path: ['storage-opts', i],
          message: `${o} is an option of ${storageOptDriver(o)}, not of the storage driver ${storage}`,
        });
    });
    const driver = d['log-driver'] ?? 'json-file';
    for (const [k, v] of Object.entries(d['log-opts'] ?? {})) {
      const rule = LOG_OPTS[k];
      const path = ['log-opts', k];
      if (rule && 'refused' in rule) {
        ctx.addIssue({ code: 'custom', path, message: `${k} ${rule.refused}` });
      } else if (!rule || !LOG_OPTS_OF[driver].includes(k)) {
        const allowed = LOG_OPTS_OF[driver].filter((o) => typeof LOG_OPTS[o] === 'function');
        ctx.addIssue({
          code: 'custom',
          path,
          message: `${k} is not an option of the ${driver} log driver (${allowed.length ? `allowed: ${allowed.join(', ')}` : 'it takes none'})`,
        });
      } else {
        const why = rule(v);
        if (why) ctx.addIssue({ code: 'custom', path, message: `${k}: ${why}` });
      }
    }
  });
export type DaemonJson = z.output<typeof daemonJson>;
