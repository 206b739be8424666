/**
 * The pod admission policy as one table (DESIGN.md "Admission"): every Compose key the appliance
 * admits, the rule its value must pass, and the anchor the rule follows. A key missing from the
 * table is refused: an allow-list, so a key a newer Compose adds reaches no host until it is
 * reviewed here. handlers/pod/README.md "Admission policy" is this table in prose.
 *
 * Anchors: `baseline` and `restricted` are Kubernetes' Pod Security Standards; `isolation` keeps
 * pods apart from each other; `appliance` protects the box itself (its files, its stability).
 */

/** What a rule is about; each `setting` is a root-equivalent switch under settings.pod.allow. */
export type Anchor = 'baseline' | 'restricted' | 'isolation' | 'appliance';

export type RuleName =
  | 'free' // any value the Compose schema accepts
  | 'privileged'
  | 'capabilities'
  | 'devices'
  | 'securityOpt'
  | 'sysctls'
  | 'networkMode'
  | 'pid'
  | 'ipc'
  | 'uts'
  | 'userns'
  | 'cgroup'
  | 'volumes'
  | 'volumesFrom'
  | 'links'
  | 'envFile'
  | 'environment'
  | 'build'
  | 'extends'
  | 'containerName'
  | 'logging'
  | 'deploy'
  | 'storageOpt'
  | 'blkio'
  | 'oomScoreAdj'
  | 'oomKillDisable'
  | 'refused';

export interface KeyRule {
  rule: RuleName;
  anchor?: Anchor;
  /** the settings.pod.allow switch that relaxes the rule (root-equivalent) */
  setting?: string;
  /** why a refused key is refused (the 400's message) */
  why?: string;
}

const free: KeyRule = { rule: 'free' };
const refused = (anchor: Anchor, why: string, setting?: string): KeyRule => ({ rule: 'refused', anchor, why, setting });

/** Keys of a service. */
export const SERVICE_KEYS: Record<string, KeyRule> = {
  annotations: free,
  attach: free,
  command: free,
  configs: free, // references to top-level configs, whose `file` is checked there
  cpu_count: free,
  cpu_percent: free,
  cpu_period: free,
  cpu_quota: free,
  cpu_shares: free,
  cpus: free,
  cpuset: free,
  cap_drop: free,
  depends_on: free,
  dns: free,
  dns_opt: free,
  dns_search: free,
  domainname: free,
  entrypoint: free,
  expose: free,
  extra_hosts: free,
  group_add: free,
  healthcheck: free,
  hostname: free,
  image: free,
  init: free,
  labels: free,
  mac_address: free,
  mem_limit: free,
  mem_reservation: free,
  mem_swappiness: free,
  memswap_limit: free,
  networks: free, // names of top-level networks, checked there
  pids_limit: free,
  platform: free,
  ports: free, // host ports: no duplicates, none the host listens on (compose-check.ts)
  profiles: free,
  pull_policy: free,
  read_only: free,
  restart: free,
  scale: free,
  secrets: free, // references to top-level secrets, whose `file` is checked there
  shm_size: free,
  stdin_open: free,
  stop_grace_period: free,
  stop_signal: free,
  tmpfs: free,
  tty: free,
  ulimits: free,
  user: free,
  working_dir: free,

  privileged: { rule: 'privileged', anchor: 'baseline', setting: 'privileged' },
  cap_add: { rule: 'capabilities', anchor: 'baseline', setting: 'capabilities' },
  devices: { rule: 'devices', anchor: 'baseline', setting: 'devices' },
  device_cgroup_rules: { rule: 'devices', anchor: 'baseline', setting: 'devices' },
  gpus: { rule: 'devices', anchor: 'baseline', setting: 'devices' },
  blkio_config: { rule: 'blkio', anchor: 'appliance', setting: 'devices' },
  security_opt: { rule: 'securityOpt', anchor: 'baseline', setting: 'privileged' },
  sysctls: { rule: 'sysctls', anchor: 'baseline', setting: 'sysctls' },
  network_mode: { rule: 'networkMode', anchor: 'baseline', setting: 'hostNetwork' },
  pid: { rule: 'pid', anchor: 'baseline', setting: 'hostNamespaces' },
  ipc: { rule: 'ipc', anchor: 'baseline', setting: 'hostNamespaces' },
  uts: { rule: 'uts', anchor: 'baseline', setting: 'hostNamespaces' },
  userns_mode: { rule: 'userns', anchor: 'baseline', setting: 'hostNamespaces' },
  cgroup: { rule: 'cgroup', anchor: 'baseline', setting: 'hostNamespaces' },
  volumes: { rule: 'volumes', anchor: 'baseline' },
  volumes_from: { rule: 'volumesFrom', anchor: 'isolation' },
  links: { rule: 'links', anchor: 'isolation' },
  env_file: { rule: 'envFile', anchor: 'appliance' },
  environment: { rule: 'environment', anchor: 'appliance' },
  build: { rule: 'build', anchor: 'appliance' },
  extends: { rule: 'extends', anchor: 'appliance' },
  container_name: { rule: 'containerName', anchor: 'isolation' },
  logging: { rule: 'logging', anchor: 'appliance' },
  deploy: { rule: 'deploy', anchor: 'baseline', setting: 'devices' },
  storage_opt: { rule: 'storageOpt', anchor: 'appliance' },
  oom_score_adj: { rule: 'oomScoreAdj', anchor: 'appliance' },
  oom_kill_disable: { rule: 'oomKillDisable', anchor: 'appliance' },

  external_links: refused('isolation', 'links to containers outside the pod are not allowed'),
  cgroup_parent: refused('appliance', 'a container is never placed in a host cgroup of its choosing'),
  runtime: refused('appliance', 'the engine runtime is the host default; another runtime is a host binary'),
  isolation: refused('appliance', 'isolation modes are the engine default'),
  cpu_rt_runtime: refused('appliance', 'real-time CPU time can starve the host', 'privileged'),
  cpu_rt_period: refused('appliance', 'real-time CPU time can starve the host', 'privileged'),
  credential_spec: refused('appliance', 'credential specs name host files or registry keys'),
  develop: refused('appliance', 'develop/watch syncs host paths into the container'),
  post_start: refused('baseline', 'lifecycle hooks may run privileged commands'),
  pre_stop: refused('baseline', 'lifecycle hooks may run privileged commands'),
  label_file: refused('appliance', 'label files are host files compose reads'),
  use_api_socket: refused('baseline', 'the engine API socket is root on the host'),
  provider: refused('appliance', 'providers run host commands'),
  models: refused('appliance', 'model runners are host services'),
};

/** Top-level keys. */
export const TOP_KEYS: Record<string, KeyRule> = {
  version: free,
  name: { rule: 'free', anchor: 'isolation' }, // must be the pod's project (compose-check)
  services: free, // each service by SERVICE_KEYS
  networks: { rule: 'free', anchor: 'isolation' }, // each by the network rule
  volumes: { rule: 'free', anchor: 'baseline' }, // each by the volume rule
  secrets: { rule: 'free', anchor: 'appliance' }, // each by the secret/config rule
  configs: { rule: 'free', anchor: 'appliance' },
  include: refused('appliance', 'other compose files cannot be included; put the services in this file'),
};

/**
 * Capabilities a service may add without a setting: PSS baseline's list (docker's defaults
 * minus NET_RAW), so adding one back after a `cap_drop: [ALL]` is always fine.
 */
export const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** PSS baseline's safe sysctls: namespaced, and harmless to other containers and the host. */
export const SAFE_SYSCTLS = new Set([
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

/** Log drivers that write where the engine keeps logs (or to the local syslog/journal). */
export const LOG_DRIVERS = new Set(['json-file', 'local', 'journald', 'syslog', 'none']);
export const LOG_OPTIONS = new Set([
  'max-size',
  'max-file',
  'compress',
  'mode',
  'max-buffer-size',
  'tag',
  'labels',
  'labels-regex',
  'env',
  'env-regex',
  'syslog-address',
  'syslog-facility',
  'syslog-format',
]);

/** Keys of a top-level network, volume, secret or config entry. */
export const NETWORK_KEYS = new Set([
  'driver',
  'ipam',
  'internal',
  'attachable',
  'enable_ipv6',
  'labels',
  'name',
  'external',
  'driver_opts',
]);
export const VOLUME_KEYS = new Set(['driver', 'driver_opts', 'labels', 'name', 'external']);
export const SECRET_KEYS = new Set([
  'file',
  'content',
  'labels',
  'name',
  'external',
  'environment',
  'driver',
  'driver_opts',
  'template_driver',
]);
/** Keys of `build`. */
export const BUILD_KEYS = new Set([
  'context',
  'dockerfile',
  'dockerfile_inline',
  'args',
  'labels',
  'target',
  'shm_size',
  'network',
  'extra_hosts',
  'no_cache',
  'pull',
  'platforms',
  'tags',
  'ulimits',
  'cache_from',
]);
