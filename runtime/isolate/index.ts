import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Vars } from '../../handlers/core/vars';
import type { HostConfig } from '../config';
import type { Host } from '../host';
import { startBindingSocket } from '../bindings/socket';
import type { IsolateOptions, Isolated, IsolateRuntime } from './types';

export type { Isolated, IsolateOptions, IsolateRuntime } from './types';

/** `isolate` of the config: false (in-process), true (= workerd, the old spelling), 'workerd', 'deno'. */
export function isolateRuntime(cfg: Pick<HostConfig, 'isolate'>): IsolateRuntime | undefined {
  if (cfg.isolate === true) return 'workerd';
  return cfg.isolate === false ? undefined : cfg.isolate;
}

/** The binding socket's place: one per state directory. */
export const bindingSocketPath = (cfg: Pick<HostConfig, 'stateDir'>) => join(resolve(cfg.stateDir), 'bindings.sock');

/** Starts the route bundle in another runtime on an already serving binding socket. */
export async function launchIsolate(runtime: IsolateRuntime, o: IsolateOptions): Promise<Isolated> {
  if (runtime === 'deno') return (await import('./deno')).startDeno(o);
  return (await import('./workerd')).startWorkerd(o);
}

export interface StartIsolatedOptions {
  /** The isolate died while serving (serve() then stops the host and exits non-zero). */
  onExit?: (why: string) => void;
  log?: (line: string) => void;
}

/**
 * Isolation mode: the binding socket (stateDir/bindings.sock, 0600, a fresh secret), then the
 * isolate that uses it. close() stops the isolate, then removes the socket.
 */
export async function startIsolated(
  host: Host,
  distDir: string,
  runtime: IsolateRuntime = 'workerd',
  o: StartIsolatedOptions = {},
): Promise<Isolated> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const socket = await startBindingSocket({ bindings: host.bindings, path: bindingSocketPath(host.config), log });
  try {
    const iso = await launchIsolate(runtime, {
      distDir: resolve(distDir),
      stateDir: resolve(host.config.stateDir),
      socket,
      vars: host.vars,
      // a new secret per start, as the binding socket's: only this isolate can tell a forwarded
      // request's token row from one a client made up
      hop: { secret: randomBytes(32).toString('base64url'), tokens: host.env.TOKENS_DIRECT, vars: host.vars as Vars },
      log,
      onExit: o.onExit,
    });
    return {
      ...iso,
      async close() {
        await iso.close();
        await socket.close();
      },
    };
  } catch (e) {
    await socket.close();
    throw e;
  }
}
