/**
 * What a route module is, apart from how route() builds one: its method and path, its meta for
 * the manifest and the OpenAPI document, and the two ways it is called. The app (app.ts) needs
 * only this, so a single-route bundle can be the same app without an import cycle.
 */
import type * as z from 'zod';
import type { Env, ExecutionContext } from './bindings';
import type { Call, Reply } from './pipeline';

type AnySchema = z.ZodType;

export const API_BASE = '/api/v2';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One documented request of a route. Each example must answer `status` (default 200) on a fresh
 * `npm start` demo; the OpenAPI document shows it, and a test runs every example against the demo.
 */
export interface RouteExample {
  summary: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** The expected status (default 200). */
  status?: number;
  /**
   * Requests the example needs first, run in order on the same fresh demo (a create before the
   * by-id routes of what it created); each must answer its `status` (default 200).
   */
  before?: ExampleRequest[];
  /**
   * Reads that show the change: run on the same demo before the example (they must NOT show it
   * then) and after it (200, and the answer must contain `shows`: objects by their listed keys,
   * arrays by an element matching each listed element).
   */
  then?: (ExampleRequest & { shows: unknown })[];
}

/** A request of a demo sequence: `path` relative to /api/v2 with its values in (`/notification/agent/1/details`). */
export interface ExampleRequest {
  method: Method;
  path: string;
  body?: unknown;
  status?: number;
}

/**
 * A long operation (formatting, hashing a tree, a pod coming up): the host runs every request of
 * the route as a job (runtime/jobs/), visible at /jobs and cancellable; `Prefer: respond-async`
 * answers 202 at once. `budgetS` is the job's own time limit; `phases` what its progress names.
 */
export interface LongOperation {
  budgetS: number;
  phases: string[];
}

export interface RouteMeta {
  method: Method;
  path: string;
  permission: string;
  summary: string;
  sideEffects?: boolean;
  long?: LongOperation;
  examples?: RouteExample[];
  /** The answer's content type when the route's style sets one (S3); absent = JSON's. */
  contentType?: string;
}

export interface RouteModule {
  meta: RouteMeta;
  schemas: { params?: AnySchema; query?: AnySchema; body?: AnySchema; response: AnySchema };
  /** The Workers module contract: this route alone (matches its own path, answers OPTIONS/405). */
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
  /**
   * A call the app already matched to this route (method checked, raw path params given): auth,
   * validation, the handler, the answer. HEAD arrives as `call.method === 'HEAD'`.
   */
  handle(call: Call, rawParams: Record<string, string>, env: Env, ctx?: ExecutionContext): Promise<Reply>;
}

/** A route's path as declared (relative to /api/v2, or absolute under /api/) made absolute. */
export function fullPath(path: string): string {
  return path.startsWith('/api/') ? path : API_BASE + path;
}
