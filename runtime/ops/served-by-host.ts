/**
 * In isolation mode the host answers health, version and metrics itself (in-process routes):
 * they report on the isolate, so they must answer when it is dead or hung. Everything else goes
 * to the isolate.
 */
import { basePathOf } from '../../handlers/core/app';
import type { Env } from '../../handlers/core/bindings';
import type { Vars } from '../../handlers/core/vars';
import type { FetchHandler } from '../http/server';

/** The sub-paths (under the base path) the host keeps. */
export const HOST_SERVED = new Set(['/health', '/version', '/metrics']);

export function withHostServed(host: { app: FetchHandler; vars: Vars; env: Env }, isolate: FetchHandler): FetchHandler {
  const mine = (method: string, path: string) => {
    if (method !== 'GET' && method !== 'HEAD') return false;
    const base = basePathOf(host.vars);
    return path.startsWith(base) && HOST_SERVED.has(path.slice(base.length));
  };
  return routedBetween(host, isolate, mine);
}

/**
 * A handler that sends what `hostServes` picks to the host's own app (with the host's env) and
 * the rest to the isolate: for a WHATWG Request (`fetch`) and, when both sides take one, for the
 * host server's Call (`handle`: no WHATWG objects on the way to the isolate).
 */
export function routedBetween(
  host: { app: FetchHandler; env: Env },
  isolate: FetchHandler,
  hostServes: (method: string, path: string) => boolean,
): FetchHandler {
  const own = host.app.handle;
  const theirs = isolate.handle;
  return {
    fetch: (request, env, ctx) =>
      hostServes(request.method, new URL(request.url).pathname)
        ? host.app.fetch(request, host.env, ctx)
        : isolate.fetch(request, env, ctx),
    ...(own && theirs
      ? {
          handle: (call, env, ctx) =>
            hostServes(call.method, call.url.pathname) ? own(call, host.env, ctx) : theirs(call, env, ctx),
        }
      : {}),
  };
}

/**
 * Whether the isolate answers: a GET of its version route (no token, no command) within
 * `timeoutMs`; a hung isolate (stopped, deadlocked) is `unresponsive`.
 */
export async function probeIsolate(
  isolate: FetchHandler,
  env: Env,
  vars: Vars,
  timeoutMs = 1000,
): Promise<'alive' | 'unresponsive'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const answer = isolate.fetch(new Request(`http://ballast.local${basePathOf(vars)}/version`), env);
    const r = await Promise.race([
      answer,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    if (!r) return 'unresponsive';
    await r.body?.cancel();
    return r.status === 200 ? 'alive' : 'unresponsive';
  } catch {
    return 'unresponsive';
  } finally {
    clearTimeout(timer);
  }
}
