/** What the pod routes share: names and paths of a pod, its commands, its state from systemd. */
import { areaSettings } from '../core/settings';
import { ApiError, badGateway, conflict, issuesText, notFound, validationFailed } from '../core/errors';
import type { EventsBinding } from '../core/bindings';
import { commandFailed, commandTimeout, failureText, type SystemClient } from '../core/system';
import { bin, path, type Vars } from '../core/vars';
import {
  APPLY_OP,
  COMPOSE_FILE_NAME,
  type ApplyPayload,
  type ApplyResult,
  flavourOf,
  podSettings,
  VALIDATE_OP,
  type PodSettings,
  type ValidateResult,
} from './contract';
import { parseComposePs } from './parse/compose-ps';
import { parseFstab, type FstabEntry } from '../tools/fstab';
import { parseSystemctlShow } from '../tools/systemctl-show';
import { unitState, type PodServiceState } from './unit-state';
import { recipeByName, recipeServices } from './recipes/index';
import { renderUnit } from './render/unit';

export interface PodRef {
  /** `<prefix>-pod-<name>`: compose project, directory names, unit name without `.service` */
  project: string;
  unit: string;
  /** the pod's data directory (`<paths.podData>/<project>`): what its containers may bind */
  dir: string;
  /** the directory of its compose file (`<paths.podFiles>/<project>`): root's, never bound */
  filesDir: string;
  composeFile: string;
  unitFile: string;
}

const RESERVED = new Set(['suggested', 'config']);

/** `web` and `ballast-pod-web` name the same pod (the prefix is not added twice). */
export function podRef(vars: Vars, s: PodSettings, name: string): PodRef {
  const head = `${s.prefix}-pod-`;
  const short = name.startsWith(head) ? name.slice(head.length) : name;
  if (short === '') throw validationFailed('params.name', `the pod name after ${head} is empty`);
  // GET /pod/suggested/… and /pod/config would shadow a pod of that name
  if (RESERVED.has(short)) throw validationFailed('params.name', `${short} is reserved (it is a route under /pod)`);
  const project = `${head}${short}`;
  if (project.length > 63) throw validationFailed('params.name', `${project} is longer than 63 characters`);
  const filesDir = `${path(vars, 'podFiles')}/${project}`;
  return {
    project,
    unit: `${project}.service`,
    dir: `${path(vars, 'podData')}/${project}`,
    filesDir,
    composeFile: `${filesDir}/${COMPOSE_FILE_NAME}`,
    unitFile: `${path(vars, 'podUnitDir')}/${project}.service`,
  };
}

export function composeArgv(s: PodSettings, ref: PodRef, sub: string[]): string[] {
  return [...s.composeCommand, '-p', ref.project, '-f', ref.composeFile, ...sub];
}

/** `ps` per flavour: compose v2 and podman-compose print JSON, docker-compose 1.x only a table. */
export function psArgs(s: PodSettings): string[] {
  switch (flavourOf(s)) {
    case 'compose-v2':
      return ['ps', '-a', '--format', 'json'];
    case 'podman-compose':
      return ['ps', '--format', 'json']; // podman-compose lists stopped containers itself (podman ps -a)
    case 'docker-compose-v1':
      return ['ps', '-a'];
  }
}

export const execEnv = (s: PodSettings) => (Object.keys(s.env).length ? { env: s.env } : {});

/** Everything the tool printed, stdout then stderr (compose writes its progress to stderr). */
export const outputOf = (r: { stdout: string; stderr: string }) =>
  [r.stdout.trim(), r.stderr.trim()].filter((x) => x !== '').join('\n');

export function unitText(vars: Vars, s: PodSettings, ref: PodRef): string {
  return renderUnit({
    project: ref.project,
    dir: ref.dir,
    filesDir: ref.filesDir,
    verifyArgv: [...s.verifyCommand, '--', ref.project],
    composeArgv: (sub) => composeArgv(s, ref, sub),
    engineUnit: s.engineUnit,
    env: s.env,
    timeoutSec: Math.ceil(s.composeTimeoutMs / 1000),
    productName: vars.productName,
  });
}

export interface ServiceInfo {
  id: string;
  state: PodServiceState;
  locked: boolean;
}

const SHOW_PROPS = '--property=Id,LoadState,ActiveState,SubState,UnitFileState';

/**
 * One `systemctl show` for all the units; every unit asked for gets an answer. With `containers`,
 * a unit systemd calls active (a oneshot unit stays so after `up -d`) is online only while one of
 * its containers runs or is paused (`compose ps`): a pod whose containers all died is not online.
 */
export async function serviceStates(
  system: SystemClient,
  vars: Vars,
  units: string[],
  o: { containers?: boolean } = {},
): Promise<Map<string, ServiceInfo>> {
  const out = new Map<string, ServiceInfo>();
  if (units.length === 0) return out;
  const r = await system.run([bin(vars, 'systemctl'), 'show', '--no-pager', SHOW_PROPS, '--', ...units]);
  const blocks = parseSystemctlShow(r.stdout);
  const s = o.containers ? areaSettings(vars, 'pod', podSettings) : undefined;
  for (const [i, u] of units.entries()) {
    // systemctl prints the blocks in the order asked; Id confirms it
    const b = blocks.find((x) => x.Id === u) ?? blocks[i];
    let st = unitState(b);
    if (s && st.state === 'online' && !(await anyContainerUp(system, s, podRef(vars, s, u.replace(/\.service$/, '')))))
      st = unitState({ ...b, ActiveState: 'inactive' });
    out.set(u, { id: u, ...st });
  }
  return out;
}

async function anyContainerUp(system: SystemClient, s: PodSettings, ref: PodRef): Promise<boolean> {
  const ps = await system.run(composeArgv(s, ref, psArgs(s)), execEnv(s));
  return parseComposePs(ps.stdout, ref.project).some((c) => c.state === 'running' || c.state === 'paused');
}

export async function readFstab(system: SystemClient, vars: Vars): Promise<FstabEntry[]> {
  return parseFstab((await system.readFile(path(vars, 'fstab'))) ?? '');
}

/** The container system is configured once /etc/fstab has an entry for the pod data mount location. */
export async function podDataEntry(system: SystemClient, vars: Vars, s: PodSettings): Promise<FstabEntry | undefined> {
  return (await readFstab(system, vars)).find((e) => e.fs_file === s.dataMountpoint);
}

export async function requireConfigured(system: SystemClient, vars: Vars, s: PodSettings): Promise<void> {
  if (!(await podDataEntry(system, vars, s))) {
    throw conflict('container system not configured', {
      hint: 'POST /pod/config first (it writes the pod data mount to fstab)',
    });
  }
}

export async function podExists(system: SystemClient, ref: PodRef): Promise<boolean> {
  return (await system.stat(ref.composeFile)) !== null;
}

export async function readCompose(system: SystemClient, ref: PodRef): Promise<Record<string, unknown> | null> {
  // a container bind-mounting its pod directory could leave a FIFO or a link there: read files only
  const st = await system.stat(ref.composeFile);
  if (st === null) return null;
  if (st.type !== 'file') throw conflict(`${ref.composeFile} is not a regular file (${st.type}); it is not read`);
  const text = await system.readFile(ref.composeFile);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw badGateway(`${ref.composeFile} is not a JSON compose file (edited by hand?); update the pod to rewrite it`);
}

export async function requirePod(system: SystemClient, ref: PodRef): Promise<Record<string, unknown>> {
  const c = await readCompose(system, ref);
  if (!c) throw notFound(`pod ${ref.project} does not exist`);
  return c;
}

/** The services of the named recipes, keyed by service name; a name two recipes use is a 409. */
export function recipesToMerge(
  names: string[] | undefined,
  project: string,
): Record<string, Record<string, unknown>> | undefined {
  if (!names?.length) return undefined;
  const out: Record<string, Record<string, unknown>> = {};
  names.forEach((n, i) => {
    const r = recipeByName(n);
    if (!r) throw validationFailed(`body.recipes.${i}`, `unknown recipe ${n} (GET /pod/suggested lists them)`);
    for (const [k, v] of Object.entries(recipeServices(r, project))) {
      if (out[k]) throw conflict(`service ${k} of recipe ${n} is already defined by another recipe`);
      out[k] = v;
    }
  });
  return out;
}

/** A refusal of the admission as the route answers it (409, or 400 naming each JSON path). */
function refusalOf(r: Extract<ValidateResult, { ok: false }>): ApiError {
  if (r.status === 409) return conflict(r.message);
  const issues = r.issues.map((i) => ({ path: `body.${i.path}`, message: i.message }));
  return new ApiError('validation_failed', `invalid body.fileContents: ${issuesText(issues)}`, { issues });
}

/** The host validates (schema, limits, ports) and answers the compose object to store. */
export async function validateCompose(
  system: SystemClient,
  o: {
    project: string;
    fileContents: unknown;
    merge?: Record<string, Record<string, unknown>>;
    ignoreOwnPorts?: boolean;
    requireVersion?: boolean;
    probeHostPorts?: boolean;
  },
): Promise<Record<string, unknown>> {
  const r = await system.op<ValidateResult>(VALIDATE_OP, o);
  if (r.ok) return r.data;
  throw refusalOf(r);
}

/**
 * Create or update a pod in one host crossing (pod/apply): admitted, both files written, systemd
 * reloaded and a running pod restarted under the intent journal; the compose object stored.
 */
export async function applyCompose(system: SystemClient, o: ApplyPayload): Promise<Record<string, unknown>> {
  const r = await system.op<ApplyResult>(APPLY_OP, o);
  if (r.ok) return r.data;
  if ('command' in r) {
    const exec = {
      signal: null,
      truncated: false,
      code: r.exitCode ?? -1,
      stdout: '',
      stderr: r.stderr,
      durationMs: r.durationMs,
      timedOut: r.status === 504,
    };
    const kept = r.rolledBack
      ? 'both files were put back'
      : 'putting the files back did not complete (the next change or start retries it)';
    if (r.status === 504) throw commandTimeout(r.command, exec);
    throw commandFailed(
      r.command,
      exec,
      `${failureText(r.command, exec)}; the pod ${o.mode === 'create' ? 'was not created' : 'keeps its old compose file'}: ${kept}`,
    );
  }
  throw refusalOf(r);
}

export async function detail(system: SystemClient, vars: Vars, ref: PodRef, compose: Record<string, unknown>) {
  const st = await serviceStates(system, vars, [ref.unit], { containers: true });
  const svc = st.get(ref.unit) ?? { id: ref.unit, state: 'disabled' as const, locked: false };
  return {
    name: ref.project,
    compose_file: compose as { version?: string; services: Record<string, Record<string, unknown>> },
    service: [svc],
  };
}

export const composeJson = (data: Record<string, unknown>) => `${JSON.stringify(data, null, 2)}\n`;

/**
 * pause / unpause / kill: the compose verb on the pod's containers, its event, the tool's output
 * as the answer (the three routes differ only in these).
 */
export async function containerAction(
  c: { params: { name: string }; system: SystemClient; vars: Vars; events: EventsBinding },
  verb: 'pause' | 'unpause' | 'kill',
  kind: 'pod.pod.paused' | 'pod.pod.unpaused' | 'pod.pod.killed',
): Promise<string> {
  const s = areaSettings(c.vars, 'pod', podSettings);
  const ref = podRef(c.vars, s, c.params.name);
  await requirePod(c.system, ref);
  const argv = composeArgv(s, ref, [verb]);
  const r = await c.system.exec(argv, { timeoutMs: s.composeTimeoutMs, ...execEnv(s) });
  if (r.timedOut || r.code !== 0) throw commandFailed(argv, r);
  await c.events.send({ kind, data: { name: ref.project } });
  return outputOf(r);
}
