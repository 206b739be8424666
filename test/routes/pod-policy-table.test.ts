/**
 * The admission policy's table (runtime/areas/pod/admission/policy.ts), pinned as reviewed: which
 * root-equivalent setting unlocks which Compose key, the rule and anchor of every checked key,
 * the keys refused outright, and the allow-lists. A change to the policy must be made here too,
 * on purpose. The lists of capabilities and sysctls are Kubernetes' Pod Security Standards
 * (baseline profile, kubernetes.io/docs/concepts/security/pod-security-standards, as of 1.29).
 */
import { describe, expect, it } from 'vitest';
import {
  BASELINE_CAPABILITIES,
  BUILD_KEYS,
  LOG_DRIVERS,
  LOG_OPTIONS,
  NETWORK_KEYS,
  SAFE_SYSCTLS,
  SECRET_KEYS,
  SERVICE_KEYS,
  TOP_KEYS,
  VOLUME_KEYS,
} from '../../runtime/areas/pod/admission/policy';

type Rule = { rule: string; anchor?: string; setting?: string; why?: string };
const rules = Object.entries(SERVICE_KEYS as Record<string, Rule>);

describe('the pod admission policy, as reviewed', () => {
  it('each root-equivalent switch of settings.pod.allow unlocks exactly these service keys', () => {
    expect(Object.fromEntries(rules.filter(([, r]) => r.setting).map(([k, r]) => [k, r.setting]))).toEqual({
      privileged: 'privileged',
      security_opt: 'privileged',
      cpu_rt_runtime: 'privileged',
      cpu_rt_period: 'privileged',
      cap_add: 'capabilities',
      devices: 'devices',
      device_cgroup_rules: 'devices',
      gpus: 'devices',
      blkio_config: 'devices',
      deploy: 'devices',
      sysctls: 'sysctls',
      network_mode: 'hostNetwork',
      pid: 'hostNamespaces',
      ipc: 'hostNamespaces',
      uts: 'hostNamespaces',
      userns_mode: 'hostNamespaces',
      cgroup: 'hostNamespaces',
    });
  });

  it('the checked service keys, each with its rule and anchor', () => {
    const checked = rules.filter(([, r]) => r.rule !== 'free' && r.rule !== 'refused');
    expect(Object.fromEntries(checked.map(([k, r]) => [k, `${r.rule}/${r.anchor}`]))).toEqual({
      privileged: 'privileged/baseline',
      cap_add: 'capabilities/baseline',
      devices: 'devices/baseline',
      device_cgroup_rules: 'devices/baseline',
      gpus: 'devices/baseline',
      blkio_config: 'blkio/appliance',
      security_opt: 'securityOpt/baseline',
      sysctls: 'sysctls/baseline',
      network_mode: 'networkMode/baseline',
      pid: 'pid/baseline',
      ipc: 'ipc/baseline',
      uts: 'uts/baseline',
      userns_mode: 'userns/baseline',
      cgroup: 'cgroup/baseline',
      volumes: 'volumes/baseline',
      volumes_from: 'volumesFrom/isolation',
      links: 'links/isolation',
      env_file: 'envFile/appliance',
      environment: 'environment/appliance',
      build: 'build/appliance',
      extends: 'extends/appliance',
      container_name: 'containerName/isolation',
      logging: 'logging/appliance',
      deploy: 'deploy/baseline',
      storage_opt: 'storageOpt/appliance',
      oom_score_adj: 'oomScoreAdj/appliance',
      oom_kill_disable: 'oomKillDisable/appliance',
    });
  });

  it('the service keys refused outright, each with its anchor and a reason', () => {
    const refused = rules.filter(([, r]) => r.rule === 'refused');
    expect(Object.fromEntries(refused.map(([k, r]) => [k, r.anchor]))).toEqual({
      external_links: 'isolation',
      cgroup_parent: 'appliance',
      runtime: 'appliance',
      isolation: 'appliance',
      cpu_rt_runtime: 'appliance',
      cpu_rt_period: 'appliance',
      credential_spec: 'appliance',
      develop: 'appliance',
      post_start: 'baseline',
      pre_stop: 'baseline',
      label_file: 'appliance',
      use_api_socket: 'baseline',
      provider: 'appliance',
      models: 'appliance',
    });
    for (const [k, r] of refused) expect(r.why, k).toMatch(/^[a-z].{15,}[a-z)]$/);
    expect(SERVICE_KEYS.use_api_socket).toMatchObject({ why: 'the engine API socket is root on the host' });
  });

  it('top-level keys: include is refused, the rest are read entry by entry', () => {
    expect(
      Object.fromEntries(
        Object.entries(TOP_KEYS as Record<string, Rule>).map(([k, r]) => [k, `${r.rule}/${r.anchor ?? '-'}`]),
      ),
    ).toEqual({
      version: 'free/-',
      name: 'free/isolation',
      services: 'free/-',
      networks: 'free/isolation',
      volumes: 'free/baseline',
      secrets: 'free/appliance',
      configs: 'free/appliance',
      include: 'refused/appliance',
    });
  });

  it("capabilities and sysctls a pod may use without a setting are the PSS baseline's", () => {
    expect([...BASELINE_CAPABILITIES].sort()).toEqual(
      'AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT'.split(
        ' ',
      ),
    );
    expect([...SAFE_SYSCTLS].sort()).toEqual([
      'kernel.shm_rmid_forced',
      'net.ipv4.ip_local_port_range',
      'net.ipv4.ip_local_reserved_ports',
      'net.ipv4.ip_unprivileged_port_start',
      'net.ipv4.ping_group_range',
      'net.ipv4.tcp_fin_timeout',
      'net.ipv4.tcp_keepalive_intvl',
      'net.ipv4.tcp_keepalive_probes',
      'net.ipv4.tcp_keepalive_time',
      'net.ipv4.tcp_syncookies',
    ]);
  });

  it('the allow-lists of log drivers and options, and of network, volume, secret and build keys', () => {
    expect([...LOG_DRIVERS]).toEqual(['json-file', 'local', 'journald', 'syslog', 'none']);
    expect([...LOG_OPTIONS].sort()).toEqual(
      'compress env env-regex labels labels-regex max-buffer-size max-file max-size mode syslog-address syslog-facility syslog-format tag'.split(
        ' ',
      ),
    );
    expect([...NETWORK_KEYS].sort()).toEqual(
      'attachable driver driver_opts enable_ipv6 external internal ipam labels name'.split(' '),
    );
    expect([...VOLUME_KEYS].sort()).toEqual(['driver', 'driver_opts', 'external', 'labels', 'name']);
    expect([...SECRET_KEYS].sort()).toEqual(
      'content driver driver_opts environment external file labels name template_driver'.split(' '),
    );
    expect([...BUILD_KEYS].sort()).toEqual(
      'args cache_from context dockerfile dockerfile_inline extra_hosts labels network no_cache platforms pull shm_size tags target ulimits'.split(
        ' ',
      ),
    );
  });
});
