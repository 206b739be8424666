/**
 * Compose file admission for the pod area (host side: ajv compiles the schema with `new Function`,
 * which route isolates cannot run). handlers/pod/README.md "Admission policy":
 *   1. text (YAML or JSON) is read in a worker thread (compose-yaml.ts: bounded nesting, string
 *      keys, unique keys, few aliases), then bounded as a document (keys, depth, size);
 *   2. no interpolation: a `$` other than `$$` is refused;
 *   3. recipe services are merged (a taken service name is a 409);
 *   4. the Compose Specification schema (compose-spec/compose-spec@170098ba, draft-07, saved
 *      verbatim as compose-spec.json) is checked with ajv;
 *   5. the admission policy (admission/policy.ts: an allow-list of keys and values, anchored on
 *      Kubernetes' Pod Security Standards); host paths are resolved and stored absolute;
 *   6. published host ports: no duplicates, and none the host already listens on;
 *   7. the compose tool's own resolved model of the result is admitted again.
 * Every issue names its JSON path (`fileContents.services.web.privileged`).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  COMPOSE_FILE_NAME,
  type PodSettings,
  type ValidateIssue,
  type ValidatePayload,
  type ValidateResult,
} from '../../../handlers/pod/contract';
import composeSpec from './compose-spec.json';
import { importModule } from '../../launcher-bridge';
import { issuesText } from '../../../handlers/core/errors';
import { readRegular } from '../../system/files';
import { admit } from './admission/admit';
import type { EngineRunner } from './admission/engine';
import type { PathMode } from './admission/host-paths';
import { YamlReader } from './yaml-reader';

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

/** Host ports of one `ports` entry: [port, protocol][] (none when only a container port is given). */
export function hostPorts(entry: unknown): { ports: number[]; proto: string } | null {
  if (isObj(entry)) {
    const pub = entry.published;
    if (pub === undefined || pub === '' || pub === 0 || pub === '0') return null;
    return { ports: range(String(pub)), proto: String(entry.protocol ?? 'tcp') };
  }
  if (typeof entry !== 'string') return null; // a number is a container port only
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
  const host = parts[parts.length - 2]; // HOST:CONTAINER or IP:HOST:CONTAINER
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
      if (f[3] !== state) continue; // the header's is `st`
      const port = parseInt(f[1].split(':')[1] ?? '', 16);
      if (Number.isFinite(port) && port > 0) out.add(`${port}/${proto}`);
    }
  }
  return out;
}

export interface CheckContext {
  settings: PodSettings;
  /** paths.podData: each pod's data directory is `<podData>/<project>` */
  podData: string;
  /** paths.podFiles: each pod's compose file is `<podFiles>/<project>/compose.json` */
  podFiles: string;
  listeners: () => Promise<Set<string>>;
  /** the compose tool's resolved model of a candidate (settings.pod.engineCheck); null: none */
  engine: EngineRunner | null;
  /** reads compose text (default: one worker shared by every check) */
  yaml?: YamlReader;
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

/**
 * Compose substitutes `$VAR` and `${VAR:-default}` from the environment before it uses a file, so
 * a check of the text would be a check of something else: the appliance does no interpolation.
 * `$$` (Compose's literal `$`) is kept; any other `$`, in a key or a value, is refused.
 */
function dollarIssues(o: unknown, path: string, out: ValidateIssue[]): void {
  const bad = (t: string) => t.replace(/\$\$/g, '').includes('$');
  if (typeof o === 'string') {
    if (bad(o))
      out.push({
        path,
        message: `${JSON.stringify(o.length > 60 ? `${o.slice(0, 60)}…` : o)}: compose would substitute a variable here; the appliance does no interpolation (write $$ for a literal $)`,
      });
  } else if (Array.isArray(o)) o.forEach((v, i) => dollarIssues(v, `${path}.${i}`, out));
  else if (isObj(o))
    for (const [k, v] of Object.entries(o)) {
      if (bad(k)) out.push({ path: `${path}.${k}`, message: 'a key may not hold $' });
      dollarIssues(v, `${path}.${k}`, out);
    }
}

const refusal = (issues: ValidateIssue[]): ValidateResult => ({
  ok: false,
  status: 400,
  message: issuesText(issues),
  issues: issues.slice(0, 50),
});

/** the reader of compose text shared by the checks (tests give their own in CheckContext.yaml) */
const sharedReader = new YamlReader();

/** Text (YAML or JSON, read in a worker: compose-yaml.ts) or an object to a plain document, bounded. */
async function documentOf(
  fileContents: unknown,
  maxBytes: number,
  reader: YamlReader,
): Promise<{ doc: Obj } | { issues: ValidateIssue[] }> {
  let doc: unknown = fileContents;
  // text comes back as the worker's JSON: its size as it stands, parsed once into a fresh copy
  let read: string | undefined;
  if (typeof doc === 'string') {
    const r = await reader.read(doc);
    if ('message' in r) return { issues: [{ path: 'fileContents', message: r.message }] };
    read = r.json;
    doc = JSON.parse(read);
  }
  if (!isObj(doc)) return { issues: [{ path: 'fileContents', message: 'must be a mapping (version, services, …)' }] };
  const proto = noProto(doc, 'fileContents');
  if (proto) return { issues: [proto] };
  const json = read ?? JSON.stringify(doc);
  if (json.length > maxBytes)
    return {
      issues: [
        {
          path: 'fileContents',
          message: `expands to ${json.length} bytes (YAML aliases included); at most ${maxBytes} (settings.pod.maxComposeBytes)`,
        },
      ],
    };
  // an object from the request is copied: the recipe merge writes into the document
  return { doc: read === undefined ? (JSON.parse(json) as Obj) : doc };
}

/**
 * The policy on the model the engine resolves from `data` (what was checked is what runs).
 * Issues say they come from the engine's model; an engine that refuses the file is a 400 too.
 */
async function engineIssues(data: Obj, project: string, c: CheckContext, mode: PathMode): Promise<ValidateIssue[]> {
  if (!c.engine) return [];
  const r = await c.engine({ project, projectDir: resolve(c.podFiles), json: JSON.stringify(data) });
  if (!r.ok) return [{ path: 'fileContents', message: r.message }];
  const verdict = admit(r.model, {
    project,
    podDir: resolve(c.podData, project),
    settings: c.settings,
    mode: mode === 'verify' ? 'verify' : 'engine',
  });
  return verdict.issues.map((i) => ({ path: i.path, message: `as the compose tool resolves the file: ${i.message}` }));
}

export async function checkCompose(p: ValidatePayload, c: CheckContext): Promise<ValidateResult> {
  const parsed = await documentOf(p.fileContents, c.settings.maxComposeBytes, c.yaml ?? sharedReader);
  if ('issues' in parsed) return refusal(parsed.issues);
  const data = parsed.doc;
  const early: ValidateIssue[] = [];
  dollarIssues(data, 'fileContents', early);
  if (p.requireVersion && data.version === undefined)
    early.push({ path: 'fileContents.version', message: 'is required' });
  if (data.services === undefined) early.push({ path: 'fileContents.services', message: 'is required' });
  else if (!isObj(data.services))
    early.push({ path: 'fileContents.services', message: 'must be a mapping of service names to services' });
  if (early.length) return refusal(early);
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
  if (!validate(data)) return refusal((validate.errors ?? []).slice(0, 20).map(ajvIssue));

  const podDir = resolve(c.podData, p.project);
  const verdict = admit(data, { project: p.project, podDir, settings: c.settings, mode: 'store' });
  if (verdict.issues.length) return refusal(verdict.issues);
  const portIssues = await portClashes(verdict.model, p, c);
  if (portIssues.length) return refusal(portIssues);
  const fromEngine = await engineIssues(verdict.model, p.project, c, 'store');
  if (fromEngine.length) return refusal(fromEngine);
  return { ok: true, data: verdict.model };
}

/**
 * The stored file again, before a start (`ballast pod verify`): the same policy, every host path
 * must still resolve to the path that was admitted, and the engine's model is admitted again.
 */
export async function verifyStored(project: string, text: string, c: CheckContext): Promise<ValidateIssue[]> {
  const parsed = await documentOf(text, c.settings.maxComposeBytes, c.yaml ?? sharedReader);
  if ('issues' in parsed) return parsed.issues;
  const data = parsed.doc;
  const issues: ValidateIssue[] = [];
  dollarIssues(data, 'fileContents', issues);
  if (issues.length) return issues;
  const validate = await composeValidator();
  if (!validate(data)) return (validate.errors ?? []).slice(0, 20).map(ajvIssue);
  const verdict = admit(data, { project, podDir: resolve(c.podData, project), settings: c.settings, mode: 'verify' });
  if (verdict.issues.length) return verdict.issues;
  return engineIssues(data, project, c, 'verify');
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

async function portClashes(data: Obj, p: ValidatePayload, c: CheckContext): Promise<ValidateIssue[]> {
  const out: ValidateIssue[] = [];
  const mine = portsOfCompose(data);
  const seen = new Map<string, string>();
  for (const m of mine) {
    const prev = seen.get(m.key);
    if (prev) out.push({ path: m.path, message: `host port ${m.key} is also published by ${prev}` });
    else seen.set(m.key, m.path);
  }
  if (out.length || !c.settings.checkHostPorts || !p.probeHostPorts || mine.length === 0) return out;
  let own = new Set<string>();
  if (p.ignoreOwnPorts) {
    const file = resolve(c.podFiles, p.project, COMPOSE_FILE_NAME);
    try {
      const current = JSON.parse(
        readRegular(file, file, { maxBytes: c.settings.maxComposeBytes })?.toString('utf8') ?? 'null',
      ) as Obj;
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
