/**
 * Compose file validation for the pod area (host side: ajv compiles the schema with
 * `new Function`, which route isolates cannot run).
 *   1. text (YAML or JSON) is parsed with `yaml` (unique keys, few aliases); an object is taken as is;
 *   2. recipe services are merged (a taken service name is a 409);
 *   3. the Compose Specification schema (compose-spec/compose-spec@170098ba, draft-07, saved
 *      verbatim as compose-spec.json) is checked with ajv;
 *   4. the appliance limits (handlers/pod/README.md "Limits"): privileged, host namespaces,
 *      cap_add, devices, security_opt, include, and every local path compose would read or bind
 *      (volumes, top-level bind volumes, build contexts, env_file, secrets/configs files,
 *      extends files) must resolve under paths.podData or settings.pod.bindRoots;
 *   5. published host ports: no duplicates, and none the host already listens on.
 * Every issue names its JSON path (`fileContents.services.web.privileged`).
 */
import { constants, realpathSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { isAbsolute, resolve, sep } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parseDocument } from 'yaml';
import type { PodSettings, ValidateIssue, ValidatePayload, ValidateResult } from '../../../handlers/pod/contract';
import composeSpec from './compose-spec.json';
import { importModule } from '../../launcher-bridge';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

let compiled: ValidateFunction | undefined;
/** ajv is loaded at the first compose check, not at host start (~50 ms of every cold start). */
async function composeValidator(): Promise<ValidateFunction> {
  if (!compiled) {
    const { default: Ajv } = await importModule<typeof import('ajv')>('ajv');
    const { default: addFormats } = await importModule<typeof import('ajv-formats')>('ajv-formats');
    const ajv = new Ajv({ strict: false, allErrors: false });
    addFormats(ajv);
    const { $schema: _drop, ...schema } = composeSpec as Obj;
    compiled = ajv.compile(schema);
  }
  return compiled;
}

const jsonPath = (base: string, instancePath: string) =>
  [
    base,
    ...instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')),
  ].join('.');

function ajvIssue(e: ErrorObject): ValidateIssue {
  const path = jsonPath('fileContents', e.instancePath);
  const p = e.params as Obj;
  if (e.keyword === 'additionalProperties')
    return {
      path: `${path}.${String(p.additionalProperty)}`,
      message: 'is not allowed here by the Compose Specification',
    };
  if (e.keyword === 'required') return { path: `${path}.${String(p.missingProperty)}`, message: 'is required' };
  return { path, message: e.message ?? 'is invalid' };
}

/** realpath of the longest existing prefix, the rest appended (like the SYSTEM file checks). */
export function resolveExisting(p: string): string {
  const parts = resolve(p).split('/').filter(Boolean);
  for (let i = parts.length; i >= 0; i--) {
    try {
      return resolve(realpathSync.native('/' + parts.slice(0, i).join('/')), ...parts.slice(i));
    } catch {
      // shorter prefix
    }
  }
  return resolve(p);
}
const inside = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/** Host ports of one `ports` entry: [port, protocol][] (none when only a container port is given). */
export function hostPorts(entry: unknown): { ports: number[]; proto: string } | null {
  if (typeof entry === 'number') return null;
  if (isObj(entry)) {
    const pub = entry.published;
    if (pub === undefined || pub === '' || pub === 0 || pub === '0') return null;
    return { ports: range(String(pub)), proto: String(entry.protocol ?? 'tcp') };
  }
  if (typeof entry !== 'string') return null;
  let s = entry;
  let proto = 'tcp';
  const slash = s.lastIndexOf('/');
  if (slash >= 0) {
    proto = s.slice(slash + 1);
    s = s.slice(0, slash);
  }
  if (s.startsWith('[')) s = s.slice(s.indexOf(']') + 2); // [::1]:8080:80
  const parts = s.split(':');
  if (parts.length === 1) return null; // container port only
  const host = parts.length === 2 ? parts[0] : parts[parts.length - 2];
  if (host === '' || host === '0') return null;
  return { ports: range(host), proto };
}
function range(s: string): number[] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(s);
  if (!m) return [];
  const a = Number(m[1]);
  const b = m[2] ? Number(m[2]) : a;
  const out: number[] = [];
  for (let p = a; p <= b && out.length < 65536; p++) out.push(p);
  return out;
}

/** Ports the host listens on: TCP LISTEN and bound UDP sockets, IPv4 and IPv6 (/proc/net). */
export async function hostListeners(procNet = '/proc/net'): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [file, proto, state] of [
    ['tcp', 'tcp', '0A'],
    ['tcp6', 'tcp', '0A'],
    ['udp', 'udp', '07'],
    ['udp6', 'udp', '07'],
  ] as const) {
    let text: string;
    try {
      text = await readFile(`${procNet}/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== state) continue;
      const port = parseInt(f[1].split(':')[1] ?? '', 16);
      if (Number.isFinite(port) && port > 0) out.add(`${port}/${proto}`);
    }
  }
  return out;
}

export interface CheckContext {
  settings: PodSettings;
  /** paths.podData, as configured */
  podData: string;
  listeners: () => Promise<Set<string>>;
}

function noProto(o: unknown, path: string, depth = 0): ValidateIssue | null {
  if (depth > 32) return { path, message: 'is nested too deeply' };
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) {
      const r = noProto(o[i], `${path}.${i}`, depth + 1);
      if (r) return r;
    }
  } else if (isObj(o)) {
    for (const k of Object.keys(o)) {
      if (k === '__proto__' || k === 'constructor' || k === 'prototype')
        return { path: `${path}.${k}`, message: 'is not an allowed key' };
      const r = noProto(o[k], `${path}.${k}`, depth + 1);
      if (r) return r;
    }
  }
  return null;
}

export async function checkCompose(p: ValidatePayload, c: CheckContext): Promise<ValidateResult> {
  const bad = (issues: ValidateIssue[]): ValidateResult => ({
    ok: false,
    status: 400,
    message: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
    issues,
  });
  let doc: unknown = p.fileContents;
  if (typeof doc === 'string') {
    let d: ReturnType<typeof parseDocument>;
    try {
      d = parseDocument(doc, { uniqueKeys: true, prettyErrors: true, merge: true });
    } catch (e) {
      // e.g. a stack overflow on absurd nesting: still the caller's bad input, not our failure
      return bad([{ path: 'fileContents', message: `not usable YAML: ${(e as Error).message.split('\n')[0]}` }]);
    }
    if (d.errors.length) {
      const e = d.errors[0];
      const at = e.linePos?.[0];
      return bad([
        {
          path: 'fileContents',
          message: `not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
        },
      ]);
    }
    try {
      doc = d.toJS({ maxAliasCount: 50 });
    } catch (e) {
      return bad([{ path: 'fileContents', message: `not usable YAML: ${(e as Error).message.split('\n')[0]}` }]);
    }
  }
  if (!isObj(doc)) return bad([{ path: 'fileContents', message: 'must be a mapping (version, services, …)' }]);
  const proto = noProto(doc, 'fileContents');
  if (proto) return bad([proto]);
  const data: Obj = JSON.parse(JSON.stringify(doc)) as Obj;
  const early: ValidateIssue[] = [];
  if (p.requireVersion && data.version === undefined)
    early.push({ path: 'fileContents.version', message: 'is required' });
  if (data.services === undefined) early.push({ path: 'fileContents.services', message: 'is required' });
  else if (!isObj(data.services))
    early.push({ path: 'fileContents.services', message: 'must be a mapping of service names to services' });
  if (early.length) return bad(early);
  const services = data.services as Obj;
  for (const [name, svc] of Object.entries(p.merge ?? {})) {
    if (name in services)
      return {
        ok: false,
        status: 409,
        message: `service ${name} of a recipe is already defined in fileContents`,
        issues: [{ path: `fileContents.services.${name}`, message: 'is also a recipe service' }],
      };
    services[name] = svc;
  }

  const validate = await composeValidator();
  if (!validate(data)) return bad((validate.errors ?? []).slice(0, 20).map(ajvIssue));

  const issues = limitIssues(data, p.project, c);
  if (issues.length) return bad(issues);
  const portIssues = await portClashes(data, p, c);
  if (portIssues.length) return bad(portIssues);
  return { ok: true, data };
}

function limitIssues(data: Obj, project: string, c: CheckContext): ValidateIssue[] {
  const s = c.settings;
  const out: ValidateIssue[] = [];
  const podDir = resolve(c.podData, project);
  const roots = [c.podData, ...s.bindRoots].map(resolveExisting);
  const allowedCaps = new Set(s.allow.capabilities.map((x) => x.replace(/^CAP_/, '')));

  const localPath = (path: string, value: unknown, what: string) => {
    if (typeof value !== 'string' || value === '') return;
    if (value.startsWith('~')) {
      out.push({ path, message: `${what} ${value}: ~ paths are not allowed; use a path in the pod directory` });
      return;
    }
    const real = resolveExisting(isAbsolute(value) ? value : resolve(podDir, value));
    if (!roots.some((r) => inside(real, r))) {
      out.push({
        path,
        message: `${what} ${value} resolves to ${real}, outside the pod data location${s.bindRoots.length ? ' and settings.pod.bindRoots' : ''}`,
      });
    }
  };
  const isRemote = (v: string) =>
    /^[a-z][a-z0-9+.-]*:\/\//i.test(v) || v.startsWith('git@') || v.startsWith('github.com/');

  if (data.include !== undefined)
    out.push({
      path: 'fileContents.include',
      message: 'other compose files cannot be included; put the services in this file',
    });

  for (const [name, svcRaw] of Object.entries(data.services as Obj)) {
    if (!isObj(svcRaw)) continue;
    const svc = svcRaw;
    const at = (k: string) => `fileContents.services.${name}.${k}`;
    if (svc.privileged === true && !s.allow.privileged)
      out.push({
        path: at('privileged'),
        message: 'privileged containers are not allowed (settings.pod.allow.privileged)',
      });
    if (svc.network_mode === 'host' && !s.allow.hostNetwork)
      out.push({
        path: at('network_mode'),
        message: 'the host network is not allowed (settings.pod.allow.hostNetwork)',
      });
    for (const k of ['pid', 'ipc', 'uts', 'userns_mode', 'cgroup']) {
      if (svc[k] === 'host' && !s.allow.hostNamespaces)
        out.push({ path: at(k), message: `${k}: host is not allowed (settings.pod.allow.hostNamespaces)` });
    }
    if (Array.isArray(svc.cap_add)) {
      svc.cap_add.forEach((cap, i) => {
        const n = String(cap).toUpperCase().replace(/^CAP_/, '');
        if (!allowedCaps.has(n))
          out.push({
            path: at(`cap_add.${i}`),
            message: `capability ${String(cap)} is not allowed (settings.pod.allow.capabilities)`,
          });
      });
    }
    if (!s.allow.devices) {
      if (Array.isArray(svc.devices) && svc.devices.length)
        out.push({ path: at('devices'), message: 'host devices are not allowed (settings.pod.allow.devices)' });
      if (Array.isArray(svc.device_cgroup_rules) && svc.device_cgroup_rules.length)
        out.push({
          path: at('device_cgroup_rules'),
          message: 'device rules are not allowed (settings.pod.allow.devices)',
        });
    }
    if (Array.isArray(svc.security_opt) && !s.allow.privileged) {
      svc.security_opt.forEach((o, i) => {
        if (/unconfined|label[=:]disable/i.test(String(o)))
          out.push({
            path: at(`security_opt.${i}`),
            message: `${String(o)} turns confinement off (settings.pod.allow.privileged)`,
          });
      });
    }
    if (Array.isArray(svc.volumes)) {
      svc.volumes.forEach((v, i) => {
        if (typeof v === 'string') {
          const src = v.split(':')[0];
          if (v.includes(':') && (src.startsWith('/') || src.startsWith('.') || src.startsWith('~')))
            localPath(at(`volumes.${i}`), src, 'bind source');
        } else if (isObj(v) && v.type === 'bind') {
          localPath(at(`volumes.${i}.source`), v.source, 'bind source');
        }
      });
    }
    if (typeof svc.build === 'string' && !isRemote(svc.build)) localPath(at('build'), svc.build, 'build context');
    if (isObj(svc.build) && typeof svc.build.context === 'string' && !isRemote(svc.build.context))
      localPath(at('build.context'), svc.build.context, 'build context');
    const envFiles = svc.env_file === undefined ? [] : Array.isArray(svc.env_file) ? svc.env_file : [svc.env_file];
    envFiles.forEach((f, i) =>
      localPath(at(Array.isArray(svc.env_file) ? `env_file.${i}` : 'env_file'), isObj(f) ? f.path : f, 'env_file'),
    );
    if (isObj(svc.extends) && typeof svc.extends.file === 'string')
      localPath(at('extends.file'), svc.extends.file, 'extends file');
  }
  for (const top of ['secrets', 'configs']) {
    const m = data[top];
    if (isObj(m))
      for (const [k, v] of Object.entries(m))
        if (isObj(v) && v.file !== undefined) localPath(`fileContents.${top}.${k}.file`, v.file, `${top} file`);
  }
  if (isObj(data.volumes)) {
    for (const [k, v] of Object.entries(data.volumes)) {
      if (!isObj(v) || !isObj(v.driver_opts)) continue;
      const o = String(v.driver_opts.o ?? '');
      if (/(^|,)r?bind(,|$)/.test(o) || v.driver_opts.type === 'none')
        localPath(`fileContents.volumes.${k}.driver_opts.device`, v.driver_opts.device, 'bind device');
    }
  }
  return out;
}

function portsOfCompose(data: Obj | null): { key: string; path: string }[] {
  const out: { key: string; path: string }[] = [];
  if (!data || !isObj(data.services)) return out;
  for (const [name, svc] of Object.entries(data.services)) {
    if (!isObj(svc) || !Array.isArray(svc.ports)) continue;
    svc.ports.forEach((e, i) => {
      const h = hostPorts(e);
      if (h)
        for (const port of h.ports)
          out.push({ key: `${port}/${h.proto}`, path: `fileContents.services.${name}.ports.${i}` });
    });
  }
  return out;
}

/** A regular file's text (no FIFO, device or symlink: O_NONBLOCK|O_NOFOLLOW, checked after open), at most 1 MiB. */
async function readRegular(path: string): Promise<string> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > 1024 * 1024) throw new Error(`${path} is not a regular file of at most 1 MiB`);
    return await fh.readFile('utf8');
  } finally {
    await fh.close();
  }
}

async function portClashes(data: Obj, p: ValidatePayload, c: CheckContext): Promise<ValidateIssue[]> {
  const out: ValidateIssue[] = [];
  const mine = portsOfCompose(data);
  const seen = new Map<string, string>();
  for (const m of mine) {
    const prev = seen.get(m.key);
    if (prev && prev !== m.path) out.push({ path: m.path, message: `host port ${m.key} is also published by ${prev}` });
    else seen.set(m.key, m.path);
  }
  if (out.length || !c.settings.checkHostPorts || mine.length === 0) return out;
  let own = new Set<string>();
  if (p.ignoreOwnPorts) {
    try {
      const current = JSON.parse(await readRegular(resolve(c.podData, p.project, 'compose.json'))) as Obj;
      own = new Set(portsOfCompose(current).map((x) => x.key));
    } catch {
      // no current file: nothing of ours is listening
    }
  }
  const listening = await c.listeners();
  for (const m of mine) {
    if (listening.has(m.key) && !own.has(m.key))
      out.push({ path: m.path, message: `host port ${m.key} is already in use on this host` });
  }
  return out;
}
