import { createRequire } from 'node:module';
import { rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BINDING_SECRET_HEADER } from '../bindings/socket';
import { startIsolateProcess } from './process';
import type { IsolateOptions, Isolated } from './types';

const COMPATIBILITY_DATE = '2025-01-01';

/** The workerd binary of the `workerd` npm package (Miniflare's, pinned with it). */
export function workerdBinary(): string {
  try {
    const w = createRequire(import.meta.url)('workerd') as { default: string };
    return w.default;
  } catch (e) {
    throw new Error(
      `isolate workerd: the workerd package is missing (npm i workerd@1.20260421.1: the version miniflare pins): ${String(e)}`,
    );
  }
}

/** A Cap'n Proto text string literal. */
const capnpString = (s: string) => JSON.stringify(s);

/**
 * The workerd configuration: one worker (dist/app.mjs) whose SYSTEM, DB_FETCH and EVENTS_FETCH
 * are one `external` service on the binding socket, the secret header injected by workerd
 * itself; HOP_SECRET (handlers/core/hop.ts) as a text binding; VARS as a JSON binding; served on a Unix socket. `appModule` is relative to the config
 * file (workerd reads `embed` paths relative to it).
 */
export function workerdConfig(o: {
  appModule: string;
  bindingSocket: string;
  secret: string;
  hopSecret: string;
  listen: string;
  vars: unknown;
}): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .app),
    (name = "bindings", external = (address = ${capnpString(`unix:${o.bindingSocket}`)}, http = (injectRequestHeaders = [(name = ${capnpString(BINDING_SECRET_HEADER)}, value = ${capnpString(o.secret)})]))),
  ],
  sockets = [(name = "http", address = ${capnpString(`unix:${o.listen}`)}, http = (), service = "main")],
);
const app :Workerd.Worker = (
  modules = [(name = "app.mjs", esModule = embed ${capnpString(o.appModule)})],
  compatibilityDate = ${capnpString(COMPATIBILITY_DATE)},
  bindings = [
    (name = "SYSTEM", service = "bindings"),
    (name = "DB_FETCH", service = "bindings"),
    (name = "EVENTS_FETCH", service = "bindings"),
    (name = "HOP_SECRET", text = ${capnpString(o.hopSecret)}),
    (name = "VARS", json = ${capnpString(JSON.stringify(o.vars))}),
  ],
);
`;
}

/**
 * Isolation mode on workerd: the workerd binary itself (no Miniflare: no loopback entry worker,
 * no in-process services) serves dist/app.mjs on stateDir/isolate-workerd.sock; its bindings are
 * workerd `external` services on the binding socket. The configuration holds the secrets: it is
 * written 0600 into the private state directory and removed as soon as workerd has read it.
 */
export function startWorkerd(o: IsolateOptions): Promise<Isolated> {
  const listen = join(o.stateDir, 'isolate-workerd.sock');
  const configFile = join(o.stateDir, 'isolate-workerd.capnp');
  rmSync(configFile, { force: true }); // a killed host's leftover: the new file is created 0600
  writeFileSync(
    configFile,
    workerdConfig({
      appModule: relative(o.stateDir, join(o.distDir, 'app.mjs')),
      bindingSocket: o.socket.path,
      secret: o.socket.secret,
      hopSecret: o.hop.secret,
      listen,
      vars: o.vars,
    }),
    { mode: 0o600 },
  );
  return startIsolateProcess(o, {
    runtime: 'workerd',
    bin: workerdBinary(),
    args: ['serve', '--experimental', '--control-fd=3', configFile],
    env: {},
    listen,
    readiness: 'control-fd',
    hop: 'http',
    afterStart: () => rmSync(configFile, { force: true }),
  });
}
