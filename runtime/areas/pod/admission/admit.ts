/**
 * Evaluates the admission policy (policy.ts) on a compose model: the client's file, the stored
 * file before a start, or the engine's resolved model. Returns the issues and, for a client's
 * file, the model to store (host paths resolved and absolute).
 */
import type { PodSettings } from '../../../../handlers/pod/contract';
import { HostPaths, type PathMode } from './host-paths';
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
  type KeyRule,
} from './policy';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface Issue {
  path: string;
  message: string;
}

export interface AdmitContext {
  project: string;
  /** `<paths.podData>/<project>` */
  podDir: string;
  settings: PodSettings;
  mode: PathMode;
}

/** Compose reads these words as true (YAML 1.1 booleans, and what its type coercion takes). */
const TRUTHY = /^(true|yes|y|on|1)$/i;
const FALSY = /^(false|no|n|off|0)$/i;
/** true, false, or undefined for a value that is neither (refused where a boolean decides). */
export function boolOf(v: unknown): boolean | undefined {
  if (v === true || v === 1) return true;
  if (v === false || v === 0 || v === null) return false;
  if (typeof v === 'string') return TRUTHY.test(v.trim()) ? true : FALSY.test(v.trim()) ? false : undefined;
  return undefined;
}

const listOf = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const isExtension = (k: string) => k.startsWith('x-');

export function admit(model: Obj, c: AdmitContext): { issues: Issue[]; model: Obj } {
  const issues: Issue[] = [];
  const issue = (path: string, message: string) => issues.push({ path, message });
  const s = c.settings;
  const allow = s.allow;
  const paths = new HostPaths(c.podDir, s.bindRoots, c.mode, issue);
  const out: Obj = structuredClone(model);
  const services = isObj(out.services) ? out.services : {};
  const serviceNames = new Set(Object.keys(services));
  const needs = (setting: string) => ` (settings.pod.allow.${setting}, root-equivalent)`;
  const refuse = (at: string, r: KeyRule, what: string) =>
    issue(at, `${what}${r.why ? `: ${r.why}` : ' is not allowed'}${r.setting ? needs(r.setting) : ''}`);

  for (const k of Object.keys(out)) {
    if (isExtension(k)) continue;
    const r = TOP_KEYS[k];
    if (!r) issue(`fileContents.${k}`, 'is not a top-level key the appliance admits');
    else if (r.rule === 'refused') refuse(`fileContents.${k}`, r, k);
  }
  if (out.name !== undefined && out.name !== c.project)
    issue('fileContents.name', `the project name is the pod's own (${c.project}), not ${String(out.name)}`);

  // exactly the name the engine would give: `_` and `-` are in pod names, so a prefix may be another pod's
  const engineNamed = (e: Obj, key: string) => e.name === undefined || e.name === `${c.project}_${key}`;

  for (const [name, raw] of Object.entries(isObj(out.networks) ? out.networks : {})) {
    const at = `fileContents.networks.${name}`;
    if (!isObj(raw)) continue;
    for (const k of Object.keys(raw))
      if (!NETWORK_KEYS.has(k) && !isExtension(k)) issue(`${at}.${k}`, 'is not a network key the appliance admits');
    if (boolOf(raw.external) !== false && raw.external !== undefined)
      issue(`${at}.external`, 'external networks are not allowed: a pod joins only its own networks');
    if (!engineNamed(raw, name))
      issue(
        `${at}.name`,
        `a pod's network is named by the engine (${c.project}_${name}); another name may be another pod's or the host's`,
      );
    if (raw.driver !== undefined && raw.driver !== 'bridge')
      issue(
        `${at}.driver`,
        // no setting admits it: say so, rather than name one that would not help
        `network driver ${String(raw.driver)} is not allowed (bridge only: others attach to host interfaces; no setting admits them)`,
      );
    if (raw.driver_opts !== undefined && !(isObj(raw.driver_opts) && Object.keys(raw.driver_opts).length === 0))
      issue(`${at}.driver_opts`, 'network driver options are not allowed (they name host bridges and interfaces)');
    if (isObj(raw.ipam) && raw.ipam.driver !== undefined && raw.ipam.driver !== 'default')
      issue(`${at}.ipam.driver`, 'only the default IPAM driver is allowed');
  }

  for (const [name, raw] of Object.entries(isObj(out.volumes) ? out.volumes : {})) {
    const at = `fileContents.volumes.${name}`;
    if (!isObj(raw)) continue;
    for (const k of Object.keys(raw))
      if (!VOLUME_KEYS.has(k) && !isExtension(k)) issue(`${at}.${k}`, 'is not a volume key the appliance admits');
    if (boolOf(raw.external) !== false && raw.external !== undefined)
      issue(`${at}.external`, 'external volumes are not allowed: a pod uses only its own volumes');
    if (!engineNamed(raw, name))
      issue(
        `${at}.name`,
        `a pod's volume is named by the engine (${c.project}_${name}); another name may be another pod's`,
      );
    if (raw.driver !== undefined && raw.driver !== 'local')
      issue(`${at}.driver`, 'only the local volume driver is allowed');
    if (raw.driver_opts !== undefined) volumeDriverOpts(`${at}.driver_opts`, raw);
  }
  function volumeDriverOpts(at: string, vol: Obj) {
    const o = vol.driver_opts;
    if (!isObj(o)) return;
    const keys = Object.keys(o);
    if (keys.length === 0) return;
    const type = String(o.type ?? '');
    const opts = String(o.o ?? '')
      .split(',')
      .map((x) => x.trim());
    const binds = opts.includes('bind') || opts.includes('rbind');
    const known = keys.every((k) => k === 'type' || k === 'o' || k === 'device');
    // mount(2) takes `o: bind` as a bind whatever `type` says: the options decide, not the type
    if (type === 'tmpfs' && !binds && known) return;
    if ((type === 'none' || type === '') && binds && known) {
      const unknown = opts.filter((x) => !['bind', 'rbind', 'ro', 'rw', ''].includes(x));
      if (unknown.length) issue(`${at}.o`, `bind options ${unknown.join(',')} are not allowed (bind, rbind, ro, rw)`);
      const real = paths.bind(`${at}.device`, o.device, !opts.includes('ro'), 'bind device');
      if (real !== undefined) o.device = real;
      return;
    }
    issue(
      at,
      `a volume that mounts ${type || 'something'} (${keys.join(', ')}) is not allowed: only tmpfs, or a bind of a path in the pod directory (type: none, o: bind); no setting admits others`,
    );
  }

  for (const top of ['secrets', 'configs'] as const) {
    for (const [name, raw] of Object.entries(isObj(out[top]) ? out[top] : {})) {
      const at = `fileContents.${top}.${name}`;
      if (!isObj(raw)) continue;
      for (const k of Object.keys(raw))
        if (!SECRET_KEYS.has(k) && !isExtension(k)) issue(`${at}.${k}`, `is not a ${top} key the appliance admits`);
      for (const k of ['driver', 'driver_opts', 'template_driver'])
        if (raw[k] !== undefined) issue(`${at}.${k}`, `${k} is not allowed (swarm-only drivers)`);
      if (raw.external !== undefined && boolOf(raw.external) !== false)
        issue(`${at}.external`, `external ${top} are not allowed`);
      if (raw.environment !== undefined)
        issue(
          `${at}.environment`,
          `the host's environment is not handed to pods; put the value in a file in the pod directory`,
        );
      if (raw.file !== undefined) {
        const real = paths.bind(`${at}.file`, raw.file, false, `${top} file`);
        if (real !== undefined) raw.file = real;
      }
    }
  }

  for (const [svcName, raw] of Object.entries(services)) {
    if (!isObj(raw)) continue;
    service(svcName, raw);
  }
  paths.nestedBinds();
  return { issues, model: out };

  function service(svcName: string, svc: Obj) {
    const at = (k: string) => `fileContents.services.${svcName}.${k}`;
    for (const [k, v] of Object.entries(svc)) {
      if (isExtension(k)) continue;
      const r = SERVICE_KEYS[k];
      if (!r) {
        issue(at(k), 'is not a service key the appliance admits');
        continue;
      }
      switch (r.rule) {
        case 'free':
          break;
        case 'refused':
          refuse(at(k), r, k);
          break;
        case 'privileged': {
          const b = boolOf(v);
          if (b === undefined) issue(at(k), 'must be true or false');
          else if (b && !allow.privileged) issue(at(k), `privileged containers are not allowed${needs('privileged')}`);
          break;
        }
        case 'capabilities':
          listOf(v).forEach((cap, i) => {
            const n = String(cap).toUpperCase().replace(/^CAP_/, '');
            const extra = new Set(allow.capabilities.map((x) => x.toUpperCase().replace(/^CAP_/, '')));
            if (!BASELINE_CAPABILITIES.has(n) && !extra.has(n))
              issue(at(`${k}.${i}`), `capability ${String(cap)} is not allowed${needs('capabilities')}`);
          });
          break;
        case 'devices':
          if (!allow.devices && !(Array.isArray(v) && v.length === 0))
            issue(at(k), `host devices are not allowed${needs('devices')}`);
          break;
        case 'blkio':
          if (isObj(v) && !allow.devices)
            for (const bk of Object.keys(v))
              if (bk !== 'weight')
                issue(at(`${k}.${bk}`), `per-device I/O settings name host devices${needs('devices')}`);
          break;
        case 'securityOpt':
          listOf(v).forEach((o, i) => {
            const t = String(o).trim();
            if (/^no-new-privileges([:=]true)?$/i.test(t)) return;
            if (!allow.privileged)
              issue(
                at(`${k}.${i}`),
                `security option ${t} is not allowed: only no-new-privileges (others turn confinement off or name host profiles)${needs('privileged')}`,
              );
          });
          break;
        case 'sysctls': {
          const names = Array.isArray(v)
            ? v.map((x) => String(x).split('=')[0].trim())
            : isObj(v)
              ? Object.keys(v)
              : [];
          names.forEach((n) => {
            if (!SAFE_SYSCTLS.has(n) && !allow.sysctls.includes(n))
              issue(at(`${k}.${n}`), `sysctl ${n} is not one of the safe, namespaced ones${needs('sysctls')}`);
          });
          break;
        }
        case 'networkMode':
          namespace(k, v, ['bridge', 'none', 'default'], allow.hostNetwork, 'hostNetwork', true);
          break;
        case 'pid':
          namespace(k, v, [''], allow.hostNamespaces, 'hostNamespaces', true);
          break;
        case 'ipc':
          namespace(k, v, ['', 'private', 'shareable', 'none'], allow.hostNamespaces, 'hostNamespaces', true);
          break;
        case 'uts':
          namespace(k, v, [''], allow.hostNamespaces, 'hostNamespaces', false);
          break;
        case 'userns':
          namespace(k, v, [''], allow.hostNamespaces, 'hostNamespaces', false);
          break;
        case 'cgroup':
          namespace(k, v, ['private'], allow.hostNamespaces, 'hostNamespaces', false);
          break;
        case 'volumes':
          if (Array.isArray(v)) v.forEach((e, i) => (v[i] = volume(at(`${k}.${i}`), e)));
          break;
        case 'volumesFrom':
          listOf(v).forEach((e, i) => {
            const src = String(e)
              .replace(/^service:/, '')
              .replace(/:(ro|rw)$/, '');
            if (!serviceNames.has(src))
              issue(
                at(`${k}.${i}`),
                `volumes_from ${String(e)}: only services of this pod (containers of other pods stay apart)`,
              );
          });
          break;
        case 'links':
          listOf(v).forEach((e, i) => {
            if (!serviceNames.has(String(e).split(':')[0]))
              issue(at(`${k}.${i}`), `link ${String(e)}: only services of this pod`);
          });
          break;
        case 'envFile': {
          const list = listOf(v);
          list.forEach((f, i) => {
            const p = Array.isArray(v) ? at(`${k}.${i}`) : at(k);
            if (isObj(f)) {
              const real = paths.check(`${p}.path`, f.path, 'env_file');
              if (real !== undefined) f.path = real;
            } else {
              const real = paths.check(p, f, 'env_file');
              if (real !== undefined) list[i] = real;
            }
          });
          svc[k] = Array.isArray(v) ? list : list[0];
          break;
        }
        case 'environment':
          if (Array.isArray(v))
            v.forEach((e, i) => {
              if (typeof e === 'string' && !e.includes('='))
                issue(
                  at(`${k}.${i}`),
                  `${e} has no value: compose would copy it from the host's environment; give a value`,
                );
            });
          else if (isObj(v))
            for (const [n, val] of Object.entries(v))
              if (val === null || val === undefined)
                issue(
                  at(`${k}.${n}`),
                  `${n} has no value: compose would copy it from the host's environment; give a value`,
                );
          break;
        case 'build':
          build(at(k), svc);
          break;
        case 'extends':
          if (isObj(v) && v.file !== undefined)
            issue(
              at(`${k}.file`),
              'extends may name a service of this file only: another file is read at every start, unchecked',
            );
          break;
        case 'containerName':
          if (v !== `${c.project}-${svcName}`)
            issue(
              at(k),
              `a container is named ${c.project}-${svcName} or by the engine (another name may be another pod's)`,
            );
          break;
        case 'logging':
          logging(at(k), v);
          break;
        case 'deploy': {
          const dev =
            isObj(v) && isObj(v.resources) && isObj(v.resources.reservations)
              ? v.resources.reservations.devices
              : undefined;
          if (dev !== undefined && !allow.devices && !(Array.isArray(dev) && dev.length === 0))
            issue(at(`${k}.resources.reservations.devices`), `host devices are not allowed${needs('devices')}`);
          break;
        }
        case 'storageOpt':
          if (isObj(v))
            for (const o of Object.keys(v))
              if (o !== 'size') issue(at(`${k}.${o}`), 'only the size storage option is allowed');
          break;
        case 'oomScoreAdj':
          if (typeof v !== 'number' || v < 0)
            issue(at(k), "must be 0 or more: a container never outlives the host's own processes when memory runs out");
          break;
        case 'oomKillDisable':
          if (boolOf(v) !== false)
            issue(at(k), 'the OOM killer stays on for containers (one that cannot be killed can take the host down)');
          break;
      }
    }

    /** host: the setting; container:/service: another pod or this one; anything else refused. */
    function namespace(k: string, v: unknown, plain: string[], allowed: boolean, setting: string, serviceOk: boolean) {
      const t = String(v ?? '');
      if (plain.includes(t)) return;
      if (t === 'host') {
        if (!allowed) issue(at(k), `${k}: host is not allowed${needs(setting)}`);
        return;
      }
      const m = /^service:(.+)$/.exec(t);
      if (m && serviceOk && serviceNames.has(m[1])) return;
      if (t.startsWith('container:')) {
        issue(at(k), `${k}: ${t} joins a container outside the pod (pods stay apart)`);
        return;
      }
      issue(
        at(k),
        `${k}: ${t} is not allowed (${[...plain.filter((x) => x), serviceOk ? 'service:<a service of this pod>' : ''].filter(Boolean).join(', ') || 'leave it out'})`,
      );
    }

    function volume(p: string, e: unknown): unknown {
      if (typeof e === 'string') {
        const parts = e.split(':');
        if (parts.length < 2) return e; // an anonymous volume
        const [src, ...rest] = parts;
        const mode = rest.length > 1 ? rest[rest.length - 1] : '';
        const flags = mode.split(',');
        if (flags.some((f) => f === 'shared' || f === 'rshared'))
          issue(p, 'shared mount propagation is not allowed (mounts made in the container would reach the host)');
        if (!(src.startsWith('/') || src.startsWith('.') || src.startsWith('~'))) return e; // a named volume
        const real = paths.bind(p, src, !flags.includes('ro'));
        return real === undefined ? e : [real, ...rest].join(':');
      }
      if (!isObj(e)) return e;
      const type = String(e.type ?? '');
      if (type === 'bind') {
        const prop = isObj(e.bind) ? String(e.bind.propagation ?? '') : '';
        if (prop === 'shared' || prop === 'rshared')
          issue(
            `${p}.bind.propagation`,
            'shared mount propagation is not allowed (mounts made in the container would reach the host)',
          );
        const real = paths.bind(`${p}.source`, e.source, boolOf(e.read_only) !== true);
        if (real !== undefined) e.source = real;
      } else if (type !== 'volume' && type !== 'tmpfs') {
        issue(`${p}.type`, `volume type ${type} is not allowed (bind, volume, tmpfs)`);
      }
      return e;
    }

    function build(p: string, s0: Obj) {
      const b = s0.build;
      const remote = (x: string) =>
        /^[a-z][a-z0-9+.-]*:\/\//i.test(x) || x.startsWith('git@') || x.startsWith('github.com/');
      if (typeof b === 'string') {
        if (!remote(b)) {
          const real = paths.check(p, b, 'build context');
          if (real !== undefined) s0.build = real;
        }
        return;
      }
      if (!isObj(b)) return;
      for (const k of Object.keys(b))
        if (!BUILD_KEYS.has(k) && !isExtension(k)) issue(`${p}.${k}`, 'is not a build key the appliance admits');
      if (typeof b.context === 'string' && !remote(b.context)) {
        const real = paths.check(`${p}.context`, b.context, 'build context');
        if (real !== undefined) b.context = real;
      }
      if (typeof b.dockerfile === 'string' && (b.dockerfile.startsWith('/') || b.dockerfile.split('/').includes('..')))
        issue(`${p}.dockerfile`, 'the Dockerfile is named inside the build context (relative, no ..)');
      if (b.network !== undefined && !['default', 'none', 'bridge'].includes(String(b.network)))
        issue(`${p}.network`, `build network ${String(b.network)} is not allowed (default, none)`);
      listOf(b.cache_from).forEach((x, i) => {
        if (/type=local|src=|dest=/.test(String(x)))
          issue(`${p}.cache_from.${i}`, 'a local build cache is a host path');
      });
    }

    function logging(p: string, v: unknown) {
      if (!isObj(v)) return;
      for (const k of Object.keys(v)) if (k !== 'driver' && k !== 'options') issue(`${p}.${k}`, 'is not a logging key');
      if (v.driver !== undefined && !LOG_DRIVERS.has(String(v.driver)))
        issue(`${p}.driver`, `log driver ${String(v.driver)} is not allowed (${[...LOG_DRIVERS].join(', ')})`);
      if (isObj(v.options))
        for (const [o, val] of Object.entries(v.options)) {
          if (!LOG_OPTIONS.has(o))
            issue(`${p}.options.${o}`, 'is not a log option the appliance admits (none naming host files)');
          else if (o === 'syslog-address' && !/^(udp|tcp):\/\/[^/]+$|^unix:\/\/\/dev\/log$/.test(String(val)))
            issue(`${p}.options.${o}`, 'syslog-address: udp://host:port, tcp://host:port or unix:///dev/log');
        }
    }
  }
}
