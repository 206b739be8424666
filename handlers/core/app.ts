import { IttyRouter, type IRequest } from 'itty-router';
import { ApiError, toApiError } from './errors';
import type { Env, ExecutionContext } from './bindings';
import { baseHeaders, errorReply, jsonReply, methodNotAllowed, preflightReply, type ResponseStyle } from './http';
import {
  callFromRequest,
  DEFAULT_MAX_BODY_BYTES,
  mapGetBodyToQuery,
  responseFromReply,
  type Call,
  type Reply,
} from './pipeline';
import { API_BASE, type Method, type RouteModule } from './route-module';
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
  /**
   * Extra unauthenticated GET pages under the base path (the docs page and its assets), by
   * sub-path; `header` reads the request's headers (If-None-Match, Accept-Encoding).
   */
  pages?: (subPath: string, header: (name: string) => string | null) => Reply | undefined | Promise<Reply | undefined>;
  /** The headers style of the app's own errors (404, 405, 413): a single-route app uses its route's. */
  style?: ResponseStyle;
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

const newRouter = () => IttyRouter<IRequest, [{ first?: Matched }], Matched | undefined>();

/**
 * One fetch handler over many routes, and the only one: the Node host, `dist/app.mjs` and every
 * single-route bundle (route.ts `fetch`) are this app, so they answer identically. The path is
 * matched once, by itty-router (the match gives the raw params); 404, 405 with Allow, HEAD as GET
 * (refused for GETs with side effects), the CORS preflight and the mapping of anything thrown
 * (errors.ts `toApiError`) are here and nowhere else; the route then does auth, validation and
 * its handler.
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
  // the method answers OPTIONS or 405. itty-router matches (its patterns, its loop over them in
  // declaration order); a handler that returns nothing lets it try the next path.
  const serves = (entry: PathEntry, method: string) =>
    entry.byMethod.has(method === 'HEAD' && entry.headSafe ? 'GET' : method);
  // One itty router per area (the path's first segment under the base): a request is matched
  // against its area's dozen patterns, not all hundred (itty tries them in turn). A pattern whose
  // first segment is a parameter would go to every router, so the order between paths holds.
  const areaOf = (path: string) => path.split('/')[3] ?? '';
  const dynamic = (key: string) => key.startsWith(':') || key.includes('*');
  const routers = new Map<string, ReturnType<typeof newRouter>>();
  const fallback = newRouter();
  for (const path of byPath.keys()) {
    const key = areaOf(path);
    if (!dynamic(key) && !routers.has(key)) routers.set(key, newRouter());
  }
  for (const [path, entry] of byPath) {
    const key = areaOf(path);
    const targets = dynamic(key) ? [...routers.values(), fallback] : [routers.get(key) ?? fallback];
    for (const router of targets)
      router.all(path, (req, seen) => {
        const hit = { entry, params: req.params };
        if (req.method !== 'OPTIONS' && serves(entry, req.method)) return hit;
        seen.first ??= hit;
        return undefined;
      });
  }
  /** The path's routes and raw params (itty leaves them URL-encoded; the route decodes them). */
  const match = async (method: string, url: URL): Promise<Matched | undefined> => {
    const seen: { first?: Matched } = {};
    const router = routers.get(areaOf(url.pathname)) ?? fallback;
    return (await router.fetch({ method, url: url.href }, seen)) ?? seen.first;
  };

  async function handle(call: Call, env: Env, ctx?: ExecutionContext): Promise<Reply> {
    const vars = env?.VARS;
    const isHead = call.method === 'HEAD';
    try {
      const base = basePathOf(vars);
      // `/` and the base path itself point a newcomer (or a browser) to the docs, without a token
      // (an app that serves the document; a single-route bundle has neither)
      if (options.openapi && (call.method === 'GET' || isHead) && [base, `${base}/`, '/'].includes(call.url.pathname)) {
        const index: Record<string, string> = { name: vars?.productName ?? 'Ballast' };
        if (options.pages) index.docs = `${base}/docs`;
        index.openapi = `${base}/openapi.json`;
        return jsonReply(index, 200, baseHeaders(vars, call.requestId), isHead);
      }
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
        const page =
          options.pages && routePath.startsWith(`${API_BASE}/`)
            ? await options.pages(sub, (name) => call.header(name))
            : undefined;
        if (page) return isHead ? { ...page, body: null } : page;
      }
      const matched = await match(call.method, call.url);
      if (!matched) throw new ApiError('route_not_found', `no route ${call.method} ${call.url.pathname}`);
      const { entry, params } = matched;
      if (call.method === 'OPTIONS') return preflightReply(vars, call.requestId, entry.methods, entry.headSafe);
      const load = entry.byMethod.get(isHead && entry.headSafe ? 'GET' : call.method);
      if (!load) throw methodNotAllowed(entry.methods, entry.headSafe);
      mapGetBodyToQuery(call);
      return await (await load()).handle(call, params, env, ctx);
    } catch (e) {
      return errorReply(toApiError(e, call.requestId), vars, call.requestId, isHead, options.style);
    }
  }

  return { handle, fetch: fetchVia(handle, options.style) };
}

/**
 * The Workers entry over a handle(): the request read into a Call (bounded body; a refusal there
 * answered in the app's error shape), the Reply made a Response. Whoever wraps handle() (the host
 * commits its audit rows) gets the same entry.
 */
export function fetchVia(handle: App['handle'], style?: ResponseStyle): App['fetch'] {
  return async (request, env, ctx) => {
    let call: Call;
    try {
      call = await callFromRequest(request, Number(env?.VARS?.settings?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
    } catch (e) {
      const requestId = crypto.randomUUID();
      const err = toApiError(e, requestId);
      return responseFromReply(errorReply(err, env?.VARS, requestId, request.method === 'HEAD', style));
    }
    return responseFromReply(await handle(call, env, ctx));
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
