/**
 * An oracle for pod admission tests, written without the product's code or tables: given the
 * model docker-compose resolved (`docker-compose config`, YAML) and the files the tool opened
 * while resolving it, say why running it would hand the container something of the host or of
 * another pod. An empty answer means harmless.
 *
 * Keys are judged by allow-list: a key this oracle has not reviewed is itself a reason, so a
 * compose version that prints something new fails the test until someone looks at it.
 * Anchors: Kubernetes' Pod Security Standards (baseline), docker's default capability set, and
 * "a pod reaches only its own data directory and its own project's objects".
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface OracleContext {
  /** the pod's data directory: the only host directory its containers may reach */
  podDir: string;
  /** the compose project (`ballast-pod-a`): the only objects (containers, networks, volumes) it may name */
  project: string;
  /** `port/proto` the host listens on: publishing one of them takes over a host service */
  hostListening?: ReadonlySet<string>;
  /** files the compose tool opened while resolving (absolute), from traceComposeConfig */
  opened?: readonly string[];
  /** files it may open anyway (the compose file itself) */
  ownFiles?: readonly string[];
  /** files the tool opens for any compose file (learnToolBaseline) */
  toolBaseline?: ReadonlySet<string>;
}

// ---- what a container may be given -------------------------------------------------------

/** docker's default capability set (moby oci/caps/defaults.go): adding one of these adds nothing. */
const DOCKER_DEFAULT_CAPS = new Set([
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
]);

/** Kubernetes PSS baseline "safe" sysctls (namespaced, isolated from other pods and the host). */
const PSS_SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/** Log drivers built into dockerd; anything else is a plugin (host code run as root). */
const BUILTIN_LOG_DRIVERS = new Set([
  'json-file',
  'local',
  'journald',
  'syslog',
  'none',
  'gelf',
  'fluentd',
  'awslogs',
  'splunk',
  'etwlogs',
  'gcplogs',
  'logentries',
]);

/** Service keys whose value gives nothing of the host, whatever it is. */
const INERT_SERVICE_KEYS = new Set([
  'annotations',
  'attach',
  'command',
  'configs', // references; the top-level entry is judged
  'cpu_count',
  'cpu_percent',
  'cpu_period',
  'cpu_quota',
  'cpu_shares',
  'cpus',
  'cpuset',
  'cap_drop',
  'depends_on',
  'dns',
  'dns_opt',
  'dns_search',
  'domainname',
  'entrypoint',
  'environment', // values a host file supplied show up as opened files instead
  'expose',
  'extra_hosts',
  'group_add',
  'healthcheck',
  'hostname',
  'image',
  'init',
  'labels',
  'links', // compose resolves them to services of the same project
  'mac_address',
  'mem_limit',
  'mem_reservation',
  'mem_swappiness',
  'memswap_limit',
  'networks', // references; the top-level entry is judged
  'pids_limit',
  'platform',
  'profiles',
  'pull_policy',
  'read_only',
  'restart',
  'scale',
  'secrets', // references; the top-level entry is judged
  'shm_size',
  'stdin_open',
  'stop_grace_period',
  'stop_signal',
  'tmpfs',
  'tty',
  'ulimits',
  'user',
  'working_dir',
]);

const TRUTHY = new Set(['true', 'yes', 'y', 'on', '1']);
const truthy = (v: unknown): boolean =>
  v === true || (typeof v === 'number' && v !== 0) || (typeof v === 'string' && TRUTHY.has(v.trim().toLowerCase()));

// ---- host paths ----------------------------------------------------------------------------

/**
 * Where a host path lands for the kernel: the longest existing prefix through realpath (symlinks
 * followed), the rest appended. Compose has already folded `.` and `..` lexically.
 */
export function hostRealpath(p: string): string {
  let head = resolve(p);
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...tail);
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(p);
      tail.unshift(head.slice(parent.length).replace(/^\//, ''));
      head = parent;
    }
  }
}

const within = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

function outsidePod(path: string, c: OracleContext): string | null {
  const pod = hostRealpath(c.podDir);
  const abs = isAbsolute(path) ? path : resolve(c.podDir, path);
  const real = hostRealpath(abs);
  return within(real, pod) ? null : real;
}

const isRemoteContext = (s: string) => /^(https?:\/\/|git:\/\/|ssh:\/\/|git@|github\.com\/)/.test(s);

// ---- namespaces ----------------------------------------------------------------------------

/** `service:<own service>` stays in the pod; anything else names the host or another container. */
function namespaceReason(key: string, v: unknown, ownServices: Set<string>, allowed: string[]): string | null {
  if (v === undefined || v === null) return null;
  const s = String(v);
  if (allowed.includes(s)) return null;
  const m = /^service:(.+)$/.exec(s);
  if (m && ownServices.has(m[1])) return null;
  return `${key} ${JSON.stringify(s)} joins a namespace outside the pod`;
}

// ---- volumes -------------------------------------------------------------------------------

interface Mount {
  type: string;
  source?: string;
  target?: string;
  propagation?: string;
}

function mountOf(entry: unknown): Mount | null {
  if (isObj(entry)) {
    const bind = isObj(entry.bind) ? entry.bind : {};
    return {
      type: String(entry.type ?? 'volume'),
      source: entry.source === undefined ? undefined : String(entry.source),
      target: entry.target === undefined ? undefined : String(entry.target),
      propagation: bind.propagation === undefined ? undefined : String(bind.propagation),
    };
  }
  if (typeof entry !== 'string') return null;
  const parts = entry.split(':');
  if (parts.length === 1) return { type: 'volume', target: parts[0] };
  const source = parts[0];
  const hostish = source.startsWith('/') || source.startsWith('.') || source.startsWith('~');
  const mode = parts.slice(2).join(':');
  const propagation = mode
    .split(',')
    .find((m) => ['shared', 'rshared', 'slave', 'rslave', 'private', 'rprivate'].includes(m));
  return { type: hostish ? 'bind' : 'volume', source, target: parts[1], propagation };
}

function volumeReasons(svc: string, vols: unknown, model: Obj, c: OracleContext): string[] {
  const out: string[] = [];
  if (!Array.isArray(vols)) return vols === undefined ? [] : [`${svc}.volumes is not a list`];
  const top = isObj(model.volumes) ? model.volumes : {};
  for (const e of vols) {
    const m = mountOf(e);
    if (!m) {
      out.push(`${svc}.volumes: unreadable entry ${JSON.stringify(e)}`);
      continue;
    }
    if (m.type === 'tmpfs') continue;
    if (m.type === 'volume') {
      if (m.source !== undefined && !(m.source in top))
        out.push(`${svc}.volumes: named volume ${m.source} is not one of the project's`);
      continue;
    }
    if (m.type !== 'bind') {
      out.push(`${svc}.volumes: mount type ${m.type}`);
      continue;
    }
    const src = m.source ?? '';
    const outside = outsidePod(src.replace(/^~(?=\/|$)/, '/root'), c);
    if (outside) out.push(`${svc}.volumes binds host path ${outside}`);
    if (m.propagation && /shared|slave/.test(m.propagation))
      out.push(`${svc}.volumes: bind propagation ${m.propagation} shares mount events with the host`);
  }
  return out;
}

// ---- services ------------------------------------------------------------------------------

type Judge = (v: unknown, ctx: { svc: string; own: Set<string>; model: Obj; c: OracleContext }) => string[];

const one = (r: string | null): string[] => (r ? [r] : []);
const present =
  (why: string): Judge =>
  (v, { svc }) =>
    v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObj(v) && !Object.keys(v).length)
      ? []
      : [`${svc}: ${why}`];
const pathJudge =
  (what: string): Judge =>
  (v, { svc, c }) => {
    const items = Array.isArray(v) ? v : v === undefined ? [] : [v];
    return items.flatMap((i) => {
      const p = isObj(i) ? (i.path ?? i.file) : i;
      if (typeof p !== 'string') return [`${svc}.${what}: unreadable ${JSON.stringify(i)}`];
      const out = outsidePod(p, c);
      return out ? [`${svc}.${what} reads host file ${out}`] : [];
    });
  };

function capName(c: unknown): string {
  return String(c).trim().toUpperCase().replace(/^CAP_/, '');
}

function sysctlEntries(v: unknown): string[] {
  if (Array.isArray(v)) return v.map((e) => String(e).split('=')[0].trim());
  if (isObj(v)) return Object.keys(v);
  return [];
}

function buildReasons(v: unknown, svc: string, c: OracleContext): string[] {
  const b: Obj = typeof v === 'string' ? { context: v } : isObj(v) ? v : {};
  const out: string[] = [];
  const ctx = String(b.context ?? '.');
  if (!isRemoteContext(ctx)) {
    const o = outsidePod(ctx, c);
    if (o) out.push(`${svc}.build context is host path ${o}`);
    if (typeof b.dockerfile === 'string' && isAbsolute(b.dockerfile)) {
      const d = outsidePod(b.dockerfile, c);
      if (d) out.push(`${svc}.build dockerfile is host path ${d}`);
    }
  }
  for (const [k, val] of Object.entries(b)) {
    if (
      ['context', 'dockerfile', 'args', 'labels', 'cache_from', 'target', 'shm_size', 'extra_hosts', 'tags'].includes(k)
    )
      continue;
    if (k === 'network') {
      if (!['default', 'none', 'bridge'].includes(String(val)))
        out.push(`${svc}.build network ${String(val)} is outside the pod`);
      continue;
    }
    if (k === 'isolation' && String(val) === 'default') continue;
    out.push(
      `${svc}.build.${k} is not reviewed by this oracle (ssh, secrets, privileged, entitlements reach the host)`,
    );
  }
  return out;
}

function loggingReasons(v: unknown, svc: string, c: OracleContext): string[] {
  if (!isObj(v)) return [];
  const out: string[] = [];
  const driver = String(v.driver ?? 'json-file');
  if (!BUILTIN_LOG_DRIVERS.has(driver)) out.push(`${svc}.logging driver ${driver} is a plugin (host code)`);
  for (const [k, val] of Object.entries(isObj(v.options) ? v.options : {})) {
    const s = String(val);
    const sock = /^unix(gram)?:\/\/(.*)$/.exec(s);
    if (sock) out.push(`${svc}.logging.options.${k}: the engine writes to host socket ${sock[2]}`);
    else if (s.startsWith('/')) {
      const o = outsidePod(s, c);
      if (o) out.push(`${svc}.logging.options.${k}: the engine reads host file ${o}`);
    }
  }
  return out;
}

function deployReasons(v: unknown, svc: string): string[] {
  if (!isObj(v)) return [];
  const res = isObj(v.resources) ? v.resources : {};
  const out: string[] = [];
  for (const side of ['reservations', 'limits'] as const) {
    const r = isObj(res[side]) ? res[side] : {};
    if (Array.isArray(r.devices) && r.devices.length) out.push(`${svc}.deploy.resources.${side}.devices: host devices`);
    if (Array.isArray(r.generic_resources) && r.generic_resources.length)
      out.push(`${svc}.deploy.resources.${side}.generic_resources: host devices`);
  }
  return out;
}

/**
 * Project names may hold `-` and `_`, so `<project>-<anything>` can be another project's name
 * (pod `a-b` is `ballast-pod-a-b`); only `<project>-<this service>` without a replica number
 * cannot be a name compose generates for another project.
 */
function containerNameReason(v: unknown, svc: string, c: OracleContext): string | null {
  if (v === undefined) return null;
  const s = String(v);
  return s === `${c.project}-${svc}` && !/[-_]\d+$/.test(s)
    ? null
    : `${svc}.container_name ${s} may be another pod's container name`;
}

function portReasons(v: unknown, svc: string, c: OracleContext): string[] {
  if (!Array.isArray(v) || !c.hostListening?.size) return [];
  const out: string[] = [];
  for (const p of v) {
    let published: string | undefined;
    let proto = 'tcp';
    if (isObj(p)) {
      published = p.published === undefined ? undefined : String(p.published);
      proto = String(p.protocol ?? 'tcp');
    } else {
      const [spec, pr] = String(p).split('/');
      proto = pr ?? 'tcp';
      const parts = spec.split(':');
      if (parts.length >= 2) published = parts[parts.length - 2];
    }
    if (!published) continue;
    const [lo, hi] = published.split('-').map(Number);
    for (let port = lo; port <= (hi ?? lo); port++)
      if (c.hostListening.has(`${port}/${proto}`))
        out.push(`${svc}.ports publishes host port ${port}/${proto}, which the host listens on`);
  }
  return out;
}

const hookReasons: Judge = (v, { svc }) =>
  (Array.isArray(v) ? v : [])
    .filter((h) => isObj(h) && truthy(h.privileged))
    .map(() => `${svc}: a lifecycle hook runs privileged`);

/** Every service key this oracle judges, and how. */
const SERVICE_JUDGES: Record<string, Judge> = {
  privileged: (v, { svc }) => (truthy(v) ? [`${svc}: privileged`] : []),
  network_mode: (v, { svc, own }) => one(namespaceReason(`${svc}.network_mode`, v, own, ['bridge', 'none', 'default'])),
  pid: (v, { svc, own }) => one(namespaceReason(`${svc}.pid`, v, own, [''])),
  ipc: (v, { svc, own }) => one(namespaceReason(`${svc}.ipc`, v, own, ['', 'private', 'shareable', 'none'])),
  uts: (v, { svc, own }) => one(namespaceReason(`${svc}.uts`, v, own, [''])),
  userns_mode: (v, { svc, own }) => one(namespaceReason(`${svc}.userns_mode`, v, own, [''])),
  cgroup: (v, { svc, own }) => one(namespaceReason(`${svc}.cgroup`, v, own, ['private'])),
  cap_add: (v, { svc }) =>
    (Array.isArray(v) ? v : [])
      .map(capName)
      .filter((cap) => !DOCKER_DEFAULT_CAPS.has(cap))
      .map((cap) => `${svc}: cap_add ${cap} is beyond docker's default set`),
  devices: present('devices: host device nodes'),
  device_cgroup_rules: present('device_cgroup_rules: access to host devices'),
  gpus: present('gpus: host GPUs'),
  security_opt: (v, { svc }) =>
    (Array.isArray(v) ? v : [])
      .map(String)
      .filter((o) => !/^no-new-privileges([:=]true)?$/.test(o))
      .map((o) => `${svc}: security_opt ${o}`),
  sysctls: (v, { svc }) =>
    sysctlEntries(v)
      .filter((k) => !PSS_SAFE_SYSCTLS.has(k))
      .map((k) => `${svc}: sysctl ${k} is outside PSS baseline's safe set`),
  volumes: (v, { svc, model, c }) => volumeReasons(svc, v, model, c),
  volumes_from: (v, { svc, own }) =>
    (Array.isArray(v) ? v : [])
      .map(String)
      .filter((e) => {
        const m = /^(?:service:)?([^:]+)(?::(?:ro|rw))?$/.exec(e);
        return !(m && own.has(m[1]) && !e.startsWith('container:'));
      })
      .map((e) => `${svc}: volumes_from ${e} is outside the pod`),
  external_links: present('external_links reach containers outside the pod'),
  cgroup_parent: present('cgroup_parent places the container in a host cgroup'),
  runtime: present('runtime: another OCI runtime (host binary)'),
  isolation: (v, { svc }) => (v === undefined || String(v) === 'default' ? [] : [`${svc}: isolation ${String(v)}`]),
  credential_spec: present('credential_spec names host files or registry keys'),
  oom_score_adj: (v, { svc }) =>
    Number(v) < 0 ? [`${svc}: oom_score_adj ${String(v)} makes the host's processes die first`] : [],
  oom_kill_disable: (v, { svc }) => (truthy(v) ? [`${svc}: oom_kill_disable`] : []),
  cpu_rt_runtime: present('cpu_rt_runtime: real-time CPU time'),
  cpu_rt_period: present('cpu_rt_period: real-time CPU time'),
  storage_opt: (v, { svc }) =>
    Object.keys(isObj(v) ? v : {})
      .filter((k) => k !== 'size') // a quota on the container's own layer
      .map((k) => `${svc}: storage_opt ${k} configures the host's storage driver`),
  blkio_config: (v, { svc }) => {
    if (!isObj(v)) return [];
    return Object.entries(v)
      .filter(([k, val]) => k !== 'weight' && Array.isArray(val) && val.length)
      .map(([k]) => `${svc}: blkio_config.${k} names host block devices`);
  },
  env_file: pathJudge('env_file'),
  label_file: pathJudge('label_file'),
  extends: (v, { svc, c }) => {
    const f = isObj(v) ? v.file : undefined;
    if (typeof f !== 'string') return [];
    const o = outsidePod(f, c);
    return o ? [`${svc}.extends reads host file ${o}`] : [];
  },
  build: (v, { svc, c }) => buildReasons(v, svc, c),
  logging: (v, { svc, c }) => loggingReasons(v, svc, c),
  deploy: (v, { svc }) => deployReasons(v, svc),
  container_name: (v, { svc, c }) => one(containerNameReason(v, svc, c)),
  ports: (v, { svc, c }) => portReasons(v, svc, c),
  post_start: hookReasons,
  pre_stop: hookReasons,
  use_api_socket: (v, { svc }) => (truthy(v) ? [`${svc}: use_api_socket hands over the engine's API socket`] : []),
  develop: present('develop.watch syncs host paths into the container'),
  provider: present('provider runs a host command'),
  models: present('models start host model runners'),
};

// ---- top level -----------------------------------------------------------------------------

function networkReasons(name: string, n: unknown, c: OracleContext): string[] {
  if (n === null || n === undefined) return [];
  if (!isObj(n)) return [`networks.${name} is unreadable`];
  const out: string[] = [];
  if (truthy(n.external) || isObj(n.external))
    out.push(`networks.${name} is external (${String(n.name ?? name)}): outside the project`);
  else if (n.name !== undefined && String(n.name) !== `${c.project}_${name}`)
    out.push(`networks.${name}: name ${String(n.name)} may be another project's network`);
  const driver = String(n.driver ?? 'bridge');
  if (driver !== 'bridge')
    out.push(`networks.${name}: driver ${driver} reaches the host's interfaces or another engine`);
  const opts = isObj(n.driver_opts) ? n.driver_opts : {};
  for (const k of Object.keys(opts))
    out.push(`networks.${name}.driver_opts.${k} configures the host side of the network`);
  for (const k of Object.keys(n))
    if (
      ![
        'driver',
        'driver_opts',
        'external',
        'name',
        'labels',
        'ipam',
        'internal',
        'attachable',
        'enable_ipv6',
      ].includes(k)
    )
      out.push(`networks.${name}.${k} is not reviewed by this oracle`);
  return out;
}

function namedVolumeReasons(name: string, v: unknown, c: OracleContext): string[] {
  if (v === null || v === undefined) return [];
  if (!isObj(v)) return [`volumes.${name} is unreadable`];
  const out: string[] = [];
  if (truthy(v.external) || isObj(v.external))
    out.push(`volumes.${name} is external (${String(v.name ?? name)}): outside the project`);
  else if (v.name !== undefined && String(v.name) !== `${c.project}_${name}`)
    out.push(`volumes.${name}: name ${String(v.name)} may be another project's volume`);
  const driver = String(v.driver ?? 'local');
  if (driver !== 'local') out.push(`volumes.${name}: driver ${driver} is a volume plugin (host code)`);
  const o = isObj(v.driver_opts) ? v.driver_opts : {};
  if (Object.keys(o).length) {
    const type = String(o.type ?? '');
    const flags = String(o.o ?? '')
      .split(',')
      .map((s) => s.trim());
    // the local driver turns `o` into mount(2) flags, and MS_BIND ignores the type: judge a bind first
    if (flags.includes('bind') || flags.includes('rbind')) {
      const src = outsidePod(String(o.device ?? ''), c);
      if (src) out.push(`volumes.${name}: a bind of host path ${src}`);
    } else if (type !== 'tmpfs')
      out.push(
        `volumes.${name}: driver_opts mount ${type || 'a device'} ${JSON.stringify(o.device ?? '')} on the host`,
      );
  }
  for (const k of Object.keys(v))
    if (!['driver', 'driver_opts', 'external', 'name', 'labels'].includes(k))
      out.push(`volumes.${name}.${k} is not reviewed by this oracle`);
  return out;
}

function fileObjectReasons(kind: 'secrets' | 'configs', name: string, v: unknown, c: OracleContext): string[] {
  if (!isObj(v)) return [];
  const out: string[] = [];
  if (typeof v.file === 'string') {
    const o = outsidePod(v.file, c);
    if (o) out.push(`${kind}.${name}: file ${o} is a host file`);
  }
  if (v.environment !== undefined)
    out.push(`${kind}.${name}: environment ${String(v.environment)} is the engine's (host's) environment`);
  if (truthy(v.external) || isObj(v.external)) out.push(`${kind}.${name} is external`);
  for (const k of Object.keys(v))
    if (!['file', 'content', 'environment', 'external', 'name', 'labels'].includes(k))
      out.push(`${kind}.${name}.${k} is not reviewed by this oracle`);
  return out;
}

/** Why running `model` would give a container of `c.project` something of the host or another pod. */
export function harmful(model: Obj, c: OracleContext): string[] {
  const out: string[] = [];
  const services = isObj(model.services) ? model.services : {};
  const own = new Set(Object.keys(services));
  for (const [svc, raw] of Object.entries(services)) {
    if (!isObj(raw)) {
      out.push(`services.${svc} is not a mapping`);
      continue;
    }
    for (const [k, v] of Object.entries(raw)) {
      if (INERT_SERVICE_KEYS.has(k) || k.startsWith('x-')) continue;
      const judge = SERVICE_JUDGES[k];
      if (!judge) out.push(`${svc}.${k} is not reviewed by this oracle`);
      else out.push(...judge(v, { svc, own, model, c }));
    }
  }
  for (const [k, v] of Object.entries(model)) {
    if (k === 'services' || k === 'version' || k.startsWith('x-')) continue;
    const entries = isObj(v) ? Object.entries(v) : [];
    if (k === 'name') {
      if (String(v) !== c.project) out.push(`name ${String(v)} is another project`);
    } else if (k === 'networks') entries.forEach(([n, d]) => out.push(...networkReasons(n, d, c)));
    else if (k === 'volumes') entries.forEach(([n, d]) => out.push(...namedVolumeReasons(n, d, c)));
    else if (k === 'secrets' || k === 'configs')
      entries.forEach(([n, d]) => out.push(...fileObjectReasons(k, n, d, c)));
    else if (k === 'include') out.push('include reads other compose files');
    else out.push(`top-level ${k} is not reviewed by this oracle`);
  }
  const pod = hostRealpath(c.podDir);
  const own2 = new Set((c.ownFiles ?? []).map(hostRealpath));
  for (const f of c.opened ?? []) {
    const real = hostRealpath(f);
    if (within(real, pod) || own2.has(real) || c.toolBaseline?.has(real) || isToolCode(real)) continue;
    out.push(`the compose tool read host file ${real} while resolving`);
  }
  return out;
}

/** The tool's own code and libraries: what it imports depends on the file's features. */
const isToolCode = (p: string) => /^\/usr\/(lib|lib64|share|local\/lib)\//.test(p) || /^\/lib(64)?\//.test(p);

// ---- running the compose tool ---------------------------------------------------------------

export interface ComposeRun {
  code: number;
  stdout: string;
  stderr: string;
  /** files opened (O_DIRECTORY excluded), absolute */
  opened: string[];
}

export interface RunOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
}

/** Runs argv (no shell) with stdin; resolves with the exit code (-1 when killed or not started). */
export function spawnWithStdin(
  o: RunOptions,
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((done) => {
    const [file, ...args] = o.argv;
    const child = spawn(file, args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs ?? 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      done({ code: null, stdout, stderr: stderr + e.message, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined); // the tool may exit before reading stdin
    child.stdin.end(o.stdin ?? '');
  });
}

/** strace's `openat(AT_FDCWD, "path", flags…) = fd` lines (resumed calls included) to opened paths. */
export function openedFiles(trace: string, cwd: string): string[] {
  const pending = new Map<string, string>();
  const out = new Set<string>();
  const unq = (s: string) => JSON.parse(`"${s.replace(/\\x([0-9a-f]{2})/gi, '\\u00$1')}"`) as string;
  for (const line of trace.split('\n')) {
    const pid = line.split(' ', 1)[0];
    const call = /\bopen(?:at2?)?\((?:AT_FDCWD|\d+<[^>]*>), "((?:[^"\\]|\\.)*)", ([A-Z_|]+)(.*)$/.exec(line);
    if (call) {
      if (call[2].includes('O_DIRECTORY')) continue;
      const rest = call[3];
      if (rest.includes('<unfinished')) pending.set(pid, unq(call[1]));
      else if (/= \d+/.test(rest)) out.add(resolve(cwd, unq(call[1])));
      continue;
    }
    const resumed = /<\.\.\. open(?:at2?)? resumed>.*= (-?\d+)/.exec(line);
    if (resumed && pending.has(pid)) {
      if (Number(resumed[1]) >= 0) out.add(resolve(cwd, pending.get(pid) as string));
      pending.delete(pid);
    }
  }
  return [...out];
}

/**
 * `docker-compose config` under strace (seccomp-bpf: only open calls stop, so it costs ~nothing),
 * returning what it printed and every file it opened.
 */
export async function traceComposeConfig(o: RunOptions): Promise<ComposeRun> {
  const dir = mkdtempSync(join(tmpdir(), 'compose-trace-'));
  const log = join(dir, 'trace');
  try {
    const r = await spawnWithStdin({
      ...o,
      argv: [
        '/usr/bin/strace',
        '--seccomp-bpf',
        '-f',
        '-qq',
        '-s',
        '4096',
        '-e',
        'trace=open,openat,openat2',
        '-e',
        'signal=none',
        '-o',
        log,
        ...o.argv,
      ],
    });
    const trace = existsSync(log) ? readFileSync(log, 'utf8') : '';
    return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr, opened: openedFiles(trace, o.cwd) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the tool opens for a trivial file (its locale, certificates, time zone), so only what a
 * candidate makes it read is judged.
 */
export async function learnToolBaseline(o: RunOptions): Promise<Set<string>> {
  const r = await traceComposeConfig(o);
  if (r.code !== 0) throw new Error(`baseline docker-compose config failed: ${r.stderr}`);
  return new Set(r.opened.map(hostRealpath));
}

/** At most `limit` of fn at once, results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
