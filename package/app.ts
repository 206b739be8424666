/**
 * The types of `ballast` (dist/app.mjs, the all-routes Workers-style module): build.mjs bundles
 * the module itself; tsc emits these declarations next to it (dist/types), checked like any code.
 */
import type { App } from '../handlers/core/app';
import type { Env, ExecutionContext } from '../handlers/core/bindings';
import type { RouteMeta } from '../handlers/core/route';

export type { App, AppEntry, AppOptions } from '../handlers/core/app';
export type {
  Env,
  D1Database,
  D1PreparedStatement,
  D1Result,
  EventsBinding,
  AppEvent,
  ExecutionContext,
  Fetcher,
} from '../handlers/core/bindings';
export type { Vars } from '../handlers/core/vars';
export type { RouteMeta, RouteModule, RouteExample, Method } from '../handlers/core/route';
export type { ErrorBody, ErrorCode } from '../handlers/core/errors';
export type { Call, Reply } from '../handlers/core/pipeline';

/** The Workers module contract: every route behind one fetch. */
export interface BallastApp {
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
}
declare const app: BallastApp;
export default app;
/** Every route's method, path, permission, summary and examples. */
export declare const routes: RouteMeta[];
/** The OpenAPI 3.1 document (the same as openapi.json). */
export declare function openapiDocument(): Record<string, unknown>;
/** The app for a host that builds the Call itself (no WHATWG objects). */
export declare const handle: App['handle'];
/**
 * The app with its env checked and bound, for a server that has the env at start (Deno.serve,
 * a Node server): throws a TypeError naming every missing binding (SYSTEM, DB or DB_FETCH,
 * EVENTS or EVENTS_FETCH, VARS and its fields) instead of a 500 on the first request.
 */
export declare function bind(env: Env): { fetch(request: Request, ctx?: ExecutionContext): Promise<Response> };
