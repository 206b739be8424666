/**
 * `createBallast`: the one call an embedder makes (the package's `ballast/host` export). It
 * builds the host from a configuration (or the demo appliance), its bindings and, when the
 * configuration asks for one, the isolate the routes run in; checks that every binding is
 * there before answering anything; and gives back a `fetch(request)` with the env bound, to
 * mount in any Fetch-API server (Hono's `app.mount`, `Deno.serve`, `node:http` adapters).
 *
 *   const ballast = await createBallast({ demo: true, basePath: '/mgmt' });
 *   hono.mount('/mgmt', ballast.fetch, { replaceRequest: false });
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONNECTION_HEADER, type ConnectionInfo } from '../handlers/core/pipeline';
import type { Env } from '../handlers/core/bindings';
import { basePathOf } from '../handlers/core/app';
import { loadConfigFile, validateConfig, type HostConfig } from './config';
import { demoConfig, seedDemo } from './demo';
import { withHostPages } from './docs-page';
import { createHost, type Host } from './host';
import { assertBindings } from './embed-env';
import { isolateRuntime } from './isolate/index';
import type { FetchHandler } from './http/server';
import type { IsolateRuntime } from './isolate/types';

export interface BallastOptions {
  /** The host's configuration, or the YAML file to read it from (as `ballast serve --config`). */
  config?: HostConfig | string;
  /**
   * The demo appliance instead (replayed commands, recorded fixtures): its state in `stateDir`
   * (default `var/demo` under the working directory), nothing else on the machine touched.
   */
  demo?: boolean | { stateDir?: string };
  /** Where the API is mounted (overrides the configuration's `basePath`; `/api/v2` by default). */
  basePath?: string;
  /** Run the routes in an isolate (overrides the configuration's `isolate`). */
  isolate?: IsolateRuntime | false;
  /** The built package (manifest, route bundles, docs assets): default this package's dist/. */
  distDir?: string;
  /** Bindings to use instead of the host's own (each is checked at start like the rest). */
  bindings?: Partial<Env>;
  log?: (line: string) => void;
}

export interface Ballast {
  /**
   * Answers one request with the env bound. A client's `x-ballast-connection` header is always
   * dropped: only `connection` (what the embedder's server knows of the socket) reaches the
   * network routes' lockout guard.
   */
  fetch(request: Request, connection?: ConnectionInfo): Promise<Response>;
  /** The base path the routes, the document (`<basePath>/openapi.json`) and the docs page (`<basePath>/docs`) are under. */
  basePath: string;
  /** The host underneath (its database, its SYSTEM service, `createToken(ballast.host.db, …)`). */
  host: Host;
  env: Env;
  /** The isolate the routes run in, when one was asked for. */
  isolate?: IsolateRuntime;
  /** Stops the isolate and the host (areas, audit writer, database). */
  close(): Promise<void>;
}

/** The package root: the nearest directory above this module with ballast's package.json. */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'ballast')
      return dir;
    if (dir === dirname(dir)) throw new Error(`ballast: no ballast package.json above ${from}`);
  }
}

function configOf(o: BallastOptions, root: string): { config: HostConfig; configFile?: string } {
  if (o.demo && o.config !== undefined) throw new TypeError('ballast: give either config or demo, not both');
  if (o.demo) {
    const config = demoConfig(root, 0, typeof o.demo === 'object' ? o.demo.stateDir : undefined);
    seedDemo(root, config);
    return { config };
  }
  if (typeof o.config === 'string') return { config: loadConfigFile(o.config), configFile: resolve(o.config) };
  if (o.config) return { config: o.config };
  throw new TypeError('ballast: give a config (an object or a YAML file) or demo: true');
}

export async function createBallast(o: BallastOptions): Promise<Ballast> {
  const root = packageRoot();
  const distDir = resolve(o.distDir ?? join(root, 'dist'));
  const given = configOf(o, root);
  const config: HostConfig = {
    ...given.config,
    ...(o.basePath !== undefined ? { basePath: o.basePath } : {}),
    ...(o.isolate !== undefined ? { isolate: o.isolate } : {}),
  };
  validateConfig(config);
  const host = await createHost({ config, configFile: given.configFile, distDir, log: o.log });
  const env: Env = { ...host.env, ...o.bindings };
  let handler: FetchHandler = host.app;
  let closeIsolate: (() => Promise<void>) | undefined;
  try {
    assertBindings(env);
    const runtime = isolateRuntime(config);
    if (runtime) {
      const { startIsolated } = await import('./isolate/index');
      const isolated = await startIsolated(host, distDir, runtime, { log: o.log });
      closeIsolate = isolated.close;
      handler = withHostPages(host, isolated);
    }
  } catch (e) {
    await host.close();
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    basePath: basePathOf(host.vars),
    host,
    env,
    isolate: isolateRuntime(config),
    fetch(request, connection) {
      const headers = new Headers(request.headers);
      headers.delete(CONNECTION_HEADER);
      if (connection) headers.set(CONNECTION_HEADER, JSON.stringify(connection));
      return handler.fetch(new Request(request, { headers }), env);
    },
    close: () =>
      (closing ??= (async () => {
        await closeIsolate?.();
        await host.close();
      })()),
  };
}
