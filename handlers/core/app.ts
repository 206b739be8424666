import { Router } from 'itty-router';
import { ApiError, internalError } from './errors';
import type { Env, ExecutionContext } from './bindings';
import { errorResponse, methodNotAllowed, preflightResponse, requestIdOf } from './http';
import type { Method, RouteModule } from './route';

/** A route the app can serve: its method and full path, and how to get its module (maybe lazily). */
export interface AppEntry {
  method: Method;
  path: string;
  /** a GET with side effects: never served for HEAD */
  sideEffects?: boolean;
  load: () => RouteModule | Promise<RouteModule>;
}

export interface App {
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
}

/**
 * One fetch handler over many routes: itty-router dispatch, plus what itty leaves out (405 with
 * Allow for a known path, HEAD as GET, preflight for every known path, JSON 404). Both the
 * embeddable `dist/app.mjs` and the Node host use this, so they answer identically.
 */
export function createApp(entries: AppEntry[]): App {
  const router = Router();
  const methodsByPath = new Map<string, Method[]>();
  const headUnsafe = new Set<string>();
  for (const e of entries) {
    const cached = memo(e.load);
    const dispatch = async (request: Request, env: Env, ctx?: ExecutionContext) => (await cached()).fetch(request, env, ctx);
    router[e.method.toLowerCase() as 'get'](e.path, dispatch);
    if (e.method === 'GET' && !e.sideEffects) router.head(e.path, dispatch);
    if (e.method === 'GET' && e.sideEffects) headUnsafe.add(e.path);
    const list = methodsByPath.get(e.path) ?? [];
    list.push(e.method);
    methodsByPath.set(e.path, list);
  }
  for (const [path, methods] of methodsByPath) {
    const headSafe = !headUnsafe.has(path);
    router.options(path, (request: Request, env: Env) => preflightResponse(env?.VARS, requestIdOf(request), methods, headSafe));
    router.all(path, (request: Request, env: Env) => errorResponse(methodNotAllowed(methods, headSafe), env?.VARS, requestIdOf(request), request.method === 'HEAD'));
  }
  router.all('*', (request: Request, env: Env) => {
    const url = new URL(request.url);
    const err = new ApiError('route_not_found', `no route ${request.method} ${url.pathname}`);
    return errorResponse(err, env?.VARS, requestIdOf(request), request.method === 'HEAD');
  });

  return {
    async fetch(request, env, ctx) {
      try {
        return (await router.fetch(request, env, ctx)) as Response;
      } catch (e) {
        const requestId = requestIdOf(request);
        console.error(`[${requestId}] dispatch error:`, e);
        return errorResponse(internalError(requestId), env?.VARS, requestId);
      }
    },
  };
}

function memo<T>(load: () => T | Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    if (!p) {
      p = Promise.resolve().then(load);
      p.catch(() => {
        p = undefined;
      });
    }
    return p;
  };
}
