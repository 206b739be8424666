import { ApiError, internalError } from './errors';
import type { Env, ExecutionContext } from './bindings';
import { errorReply, methodNotAllowed, preflightReply } from './http';
import { callFromRequest, mapGetBodyToQuery, responseFromReply, type Call, type Reply } from './pipeline';
import { API_BASE, type Method, type RouteModule } from './route';
import { rebase } from './openapi';
import type { Vars } from './vars';

/** A route the app can serve: its method and full path, and how to get its module (maybe lazily). */
export interface AppEntry {
  method: Method;
  path: string;
  /** a GET with side effects: never served for HEAD */
  sideEffects?: boolean;
  load: () => RouteModule | Promise<RouteModule>;
}

export interface App {
  /** The Workers module contract (dist/app.mjs, isolates, embedders). */
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
  /** The same app for a host that builds the Call itself (the Node host: no WHATWG objects). */
  handle(call: Call, env: Env, ctx?: ExecutionContext): Promise<Reply>;
}

export interface AppOptions {
  /** The OpenAPI document, served without a token at `<basePath>/openapi.json`. */
  openapi?: () => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Extra unauthenticated GET pages under the base path (the docs page and its assets), by sub-path. */
  pages?: (subPath: string) => Reply | undefined | Promise<Reply | undefined>;
}

/** `VARS.basePath` normalised: no trailing slash; `''` mounts the routes at the root. */
export function basePathOf(vars: Vars | undefined): string {
  const b = vars?.basePath ?? API_BASE;
  return b === '/' ? '' : b.replace(/\/+$/, '');
}

/**
 * Routes are declared under /api/v2; a request under another base path is moved there (and one
 * outside the base path is unknown). `null`: not under the base path.
 */
export function toRoutePath(pathname: string, base: string): string | null {
  if (base === API_BASE) return pathname;
  if (base !== '' && pathname !== base && !pathname.startsWith(`${base}/`)) return null;
  return API_BASE + pathname.slice(base.length);
}

/** What one path answers: its routes by method. */
interface PathEntry {
  methods: Method[];
  headSafe: boolean;
  byMethod: Map<string, () => Promise<RouteModule>>;
}

interface Matched {
  entry: PathEntry;
  params: Record<string, string>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * One fetch handler over many routes. The path is matched once (itty-router's patterns over the
 * manifest, on the pathname the host already parsed; the match gives the raw params); 404, 405 with Allow, HEAD as GET (refused for GETs with side
 * effects) and the CORS preflight are answered here and nowhere else; the route then does auth,
 * validation and its handler. Both `dist/app.mjs` and the Node host use this, so they answer
 * identically.
 */
export function createApp(entries: AppEntry[], options: AppOptions = {}): App {
  const byPath = new Map<string, PathEntry>();
  for (const e of entries) {
    const p: PathEntry = byPath.get(e.path) ?? { methods: [], headSafe: true, byMethod: new Map() };
    p.methods.push(e.method);
    p.byMethod.set(e.method, memo(e.load));
    if (e.method === 'GET' && e.sideEffects) p.headSafe = false;
    byPath.set(e.path, p);
  }
  // Paths can overlap (`/pod/:name/set` and `/pod/suggested/:name`): a path serves the request
  // when it has the method; else the next matching path is tried, and the first match that lacks
  // the method answers OPTIONS or 405.
  const serves = (entry: PathEntry, method: string) =>
    entry.byMethod.has(method === 'HEAD' && entry.headSafe ? 'GET' : method);
  const table = [...byPath].map(([path, entry]) => ({ pattern: pathPattern(path), entry }));
  /** The path's routes and raw params, on the pathname already parsed (no second URL parse). */
  const match = (method: string, pathname: string): Matched | undefined => {
    let first: Matched | undefined;
    for (const { pattern, entry } of table) {
      const m = pattern.exec(pathname);
      if (!m) continue;
      const hit = { entry, params: { ...m.groups } };
      if (method !== 'OPTIONS' && serves(entry, method)) return hit;
      first ??= hit;
    }
    return first;
  };

  async function handle(call: Call, env: Env, ctx?: ExecutionContext): Promise<Reply> {
    const vars = env?.VARS;
    const isHead = call.method === 'HEAD';
    try {
      const base = basePathOf(vars);
      const routePath = toRoutePath(call.url.pathname, base);
      if (routePath === null)
        throw new ApiError(
          'route_not_found',
          `no route ${call.method} ${call.url.pathname} (the API is under ${base || '/'})`,
        );
      if (routePath !== call.url.pathname) {
        const url = new URL(call.url.href);
        url.pathname = routePath;
        call = { ...call, url };
      }
      if (call.method === 'GET' || isHead) {
        const sub = routePath.slice(API_BASE.length);
        if (sub === '/openapi.json' && options.openapi) {
          const doc = rebase(await options.openapi(), base);
          const headers = {
            'content-type': 'application/json; charset=utf-8',
            'access-control-allow-origin': '*',
            'x-request-id': call.requestId,
            'cache-control': 'no-cache',
          };
          return { status: 200, headers, body: isHead ? null : JSON.stringify(doc) };
        }
        const page = options.pages && routePath.startsWith(`${API_BASE}/`) ? await options.pages(sub) : undefined;
        if (page) return isHead ? { ...page, body: null } : page;
      }
      const matched = match(call.method, call.url.pathname);
      if (!matched) throw new ApiError('route_not_found', `no route ${call.method} ${call.url.pathname}`);
      const { entry, params } = matched;
      if (call.method === 'OPTIONS') return preflightReply(vars, call.requestId, entry.methods, entry.headSafe);
      const load = entry.byMethod.get(isHead && entry.headSafe ? 'GET' : call.method);
      if (!load) throw methodNotAllowed(entry.methods, entry.headSafe);
      mapGetBodyToQuery(call);
      return await (await load()).handle(call, params, env, ctx);
    } catch (e) {
      if (e instanceof ApiError) return errorReply(e, vars, call.requestId, isHead);
      console.error(`[${call.requestId}] dispatch error:`, e);
      return errorReply(internalError(call.requestId), vars, call.requestId, isHead);
    }
  }

  return {
    handle,
    async fetch(request, env, ctx) {
      let call: Call;
      try {
        call = await callFromRequest(request, Number(env?.VARS?.settings?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
      } catch (e) {
        const requestId = crypto.randomUUID();
        const err = e instanceof ApiError ? e : internalError(requestId);
        return responseFromReply(errorReply(err, env?.VARS, requestId, request.method === 'HEAD'));
      }
      return responseFromReply(await handle(call, env, ctx));
    },
  };
}

/**
 * The pattern itty-router builds for a path (its v5 Router, kept character for character so
 * matching is unchanged): `:name` is one segment, `:name+` the rest, `*` anything, trailing
 * slashes allowed. The params stay raw (URL-decoded by the route).
 */
export function pathPattern(path: string): RegExp {
  return RegExp(
    `^${path
      .replace(/\/+(\/|$)/g, '$1')
      .replace(/(\/?\.?):(\w+)\+/g, '($1(?<$2>[^]+))')
      .replace(/(\/?\.?):(\w+)/g, '($1(?<$2>[^$1/]+?))')
      .replace(/\./g, '\\.')
      .replace(/(\/?)\*/g, '($1.*)?')}/*$`,
  );
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
