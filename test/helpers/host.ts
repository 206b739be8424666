import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultConfig, mergeConfig, type HostConfig } from '../../runtime/config';
import { createHost, type Host, type HostOptions } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';
import { ReplayBackend } from '../../runtime/system/replay';
import type { Fixture } from '../../runtime/system/fixture-file';
import type { RouteModule } from '../../handlers/core/route';
import { DIRECTORY_PATH_KEYS } from '../../runtime/config';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { privateDir } from './tmp';
import { createLogger, type Logger } from '../../runtime/ops/logger';

export const repo = resolve(import.meta.dirname, '../..');

/**
 * Every log line of every host this test file started through these helpers (their `log`
 * lines, and the structured logger's lines when a test asks for capturedLogger): what the
 * "nothing logs a secret" tests grep.
 */
export const hostLogLines: string[] = [];

/** The host's structured logger (runtime/ops/logger.ts) writing into hostLogLines (and `also`). */
export function capturedLogger(also?: (line: string) => void, format: 'json' | 'text' = 'json'): Logger {
  return createLogger({
    format,
    level: 'trace',
    write: (line) => {
      hostLogLines.push(line);
      also?.(line);
    },
  });
}

/** A host's `log` that also keeps each line in hostLogLines. */
const kept =
  (log?: (line: string) => void) =>
  (line: string): void => {
    hostLogLines.push(line);
    log?.(line);
  };
export const distDir = join(repo, 'dist');

export interface TestHost {
  host: Host;
  config: HostConfig;
  /** private root: every configured path lives under it */
  root: string;
  adminToken: string;
  replay?: ReplayBackend;
  token(perms: string[], name?: string): Promise<string>;
  /**
   * Call the app in-process like an HTTP client would. `json` is the parsed body (undefined when
   * empty or not JSON), typed `T` as the caller states it: `unknown` unless the test names the
   * route's answer type (`call<z.infer<typeof schema>>`); an error answer is read with errorOf.
   */
  call<T = unknown>(method: string, path: string, o?: CallOptions): Promise<Answer<T>>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  /** default: the admin token; null: send none */
  token?: string | null;
  headers?: Record<string, string>;
}

/** What `call` answers: `json` as the caller typed it (see call). */
export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  json: T;
  text: string;
}

export interface TestHostOptions {
  fixtures?: Fixture[];
  routes?: RouteModule[];
  config?: Partial<HostConfig>;
  backend?: HostOptions['backend'];
  extraOps?: HostOptions['extraOps'];
  /** where the host's log lines go (default: nowhere) */
  log?: HostOptions['log'];
  /** edits the config once the private root exists (settings naming paths under it) */
  configure?: (config: HostConfig, root: string) => void;
}

/** A config with a private state dir and every configured path under a private root. */
export function makeTestConfig(over: Partial<HostConfig> = {}): { config: HostConfig; state: string; root: string } {
  const state = privateDir('ballast-test');
  const root = join(state, 'root');
  const base = defaultConfig();
  const paths: Record<string, string> = {};
  for (const [k, p] of Object.entries(base.paths)) paths[k] = join(root, p);
  for (const k of DIRECTORY_PATH_KEYS) mkdirSync(paths[k], { recursive: true });
  // commands' temporary files (update-ca-certificates' mktemp, left behind when a test kills it)
  // go to the private directory, removed with it, never to the machine's /tmp
  const tmp = join(state, 'tmp');
  mkdirSync(tmp);
  const config = mergeConfig(base, {
    stateDir: state,
    paths,
    hostId: 'test-host',
    listen: { host: '127.0.0.1', port: 0 },
    system: { ...base.system, mode: 'replay', fixtures: [], env: { ...base.system.env, TMPDIR: tmp } },
    ...over,
  } as Partial<HostConfig>);
  return { config, state, root };
}

/** A host with a private state dir and every configured path under a private root. */
export async function makeTestHost(o: TestHostOptions = {}): Promise<TestHost> {
  const { config, state, root } = makeTestConfig(o.config);
  o.configure?.(config, root);
  const replay = o.backend ? undefined : new ReplayBackend(o.fixtures ?? []);
  const host = await createHost({
    config,
    distDir,
    routes: o.routes,
    backend: o.backend ?? replay,
    extraOps: o.extraOps,
    log: kept(o.log),
  });
  return testHostOf(host, config, root, state, replay);
}

/**
 * The demo appliance `npm start` serves (runtime/demo.ts: its replay fixtures and seed files), in
 * a private state directory; `configure` edits its config before the seed is copied.
 */
export async function makeDemoHost(
  o: Pick<HostOptions, 'routes' | 'log' | 'replayCallsKept'> & { configure?: (config: HostConfig) => void } = {},
): Promise<TestHost> {
  const state = privateDir('ballast-demo');
  const config = demoConfig(repo, 0, state);
  o.configure?.(config);
  seedDemo(repo, config);
  const host = await createHost({
    config,
    distDir,
    routes: o.routes,
    log: kept(o.log),
    replayCallsKept: o.replayCallsKept,
  });
  return testHostOf(host, config, join(state, 'root'), state);
}

async function testHostOf(
  host: Host,
  config: HostConfig,
  root: string,
  state: string,
  replay?: ReplayBackend,
): Promise<TestHost> {
  const admin = await createToken(host.db, 'admin', ['*']);
  let n = 0;
  const t: TestHost = {
    host,
    config,
    root,
    adminToken: admin.token,
    replay,
    async token(perms, name) {
      return (await createToken(host.db, name ?? `t${++n}`, perms)).token;
    },
    async call<T = unknown>(method: string, path: string, c: CallOptions = {}): Promise<Answer<T>> {
      const headers: Record<string, string> = { ...(c.headers ?? {}) };
      const token = c.token === undefined ? admin.token : c.token;
      if (token !== null) headers.token = token;
      let body: string | undefined;
      if (c.body !== undefined) {
        body = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
        headers['content-type'] = 'application/json';
      }
      const res = await host.app.fetch(new Request(`http://ballast.local${path}`, { method, headers, body }), host.env);
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      // the caller states the answer's type (the route's response schema); tests read it as such
      return { status: res.status, headers: res.headers, json: json as T, text };
    },
    async close() {
      await host.close();
      rmSync(state, { recursive: true, force: true });
    },
  };
  return t;
}

export function fixture(argv: string[], stdout: string, o: Partial<Fixture> = {}): Fixture {
  return { source: 'test-constructed', argv, code: 0, stdout, stderr: '', ...o };
}

/** Every route file under handlers/<area>/routes/, in area and file order (as the build finds them). */
export async function allRouteModules(): Promise<RouteModule[]> {
  const dir = join(repo, 'handlers');
  const out: RouteModule[] = [];
  for (const area of readdirSync(dir).sort()) {
    const rd = join(dir, area, 'routes');
    if (!existsSync(rd)) continue;
    for (const f of readdirSync(rd).sort())
      if (f.endsWith('.ts')) out.push(((await import(join(rd, f))) as { default: RouteModule }).default);
  }
  return out;
}
