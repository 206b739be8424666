import * as z from 'zod';
import { ApiError, internalError, issuesOf, issuesText, validationFailed } from './errors';
import { queryKeysOf, refuseUnknownQueryKeys } from './query';
import { authenticate, authorize, type Principal } from './auth';
import {
  database,
  events,
  type AppEvent,
  type D1Database,
  type Env,
  type EventsBinding,
  type ExecutionContext,
} from './bindings';
import { system, type SystemClient } from './system';
import { ParseError } from './parse-error';
import { baseHeaders, errorReply, jsonReply, methodNotAllowed, preflightReply, type ResponseStyle } from './http';
import {
  callFromRequest,
  parseJsonBody,
  responseFromReply,
  type Call,
  type ConnectionInfo,
  type Reply,
} from './pipeline';
import type { Vars } from './vars';
import { withLock } from './lock';

export const API_BASE = '/api/v2';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export { CONNECTION_HEADER, type ConnectionInfo } from './pipeline';

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  env: Env;
  ctx: ExecutionContext;
  requestId: string;
  principal: Principal;
  system: SystemClient;
  db: D1Database;
  events: EventsBinding;
  vars: Vars;
  connection: ConnectionInfo;
}

type AnySchema = z.ZodType;

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

export interface RouteSpec<P extends AnySchema, Q extends AnySchema, B extends AnySchema, R extends AnySchema> {
  method: Method;
  /** Relative to /api/v2 (`/kerberos/conf`), or absolute when it starts with `/api/`. itty syntax: `:name`. */
  path: string;
  /** `<area>:read` / `<area>:manage` */
  permission: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  style?: ResponseStyle;
  /**
   * A GET the spec gives side effects (an agent test sends a message, key generation writes a
   * key). HEAD is then refused instead of running it.
   */
  sideEffects?: boolean;
  /** Run the handler under this named in-process lock (see core/lock.ts). */
  lock?: string;
  /** Requests that work on the demo appliance (at least one per route). */
  examples?: RouteExample[];
  handler(c: HandlerContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<z.input<R> | Response | JsonText>;
}

/**
 * A 200 answer the handler already wrote as JSON text, for answers too large to build as
 * objects, check and serialise again (fs/explore). It is NOT checked against `response` at run
 * time: the route's tests must show its bytes parse with the schema.
 */
export class JsonText {
  /**
   * `text` is the whole JSON, or its pieces in order: an iterable is consumed once, while the
   * answer is written (see Reply.chunks), so it must not fail part way (refuse before it).
   */
  constructor(readonly text: string | Iterable<string> | AsyncIterable<string>) {}
}

export interface RouteMeta {
  method: Method;
  path: string;
  permission: string;
  summary: string;
  sideEffects?: boolean;
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

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const noopCtx: ExecutionContext = { waitUntil: () => undefined };

/** A handler's Response answer; anything whose prototype is Object's or Array's is not one. */
function isResponse(v: unknown): v is Response {
  if (v === null || typeof v !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto !== Object.prototype && proto !== Array.prototype && proto !== null && v instanceof Response;
}

export function fullPath(path: string): string {
  return path.startsWith('/api/') ? path : API_BASE + path;
}

/** `/a/:x/b` → a regex with named groups; params are matched raw and URL-decoded afterwards. */
export function compilePath(path: string): RegExp {
  const src = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? `(?<${seg.slice(1)}>[^/]+)` : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${src}/?$`);
}

export { issuesOf } from './errors';

function validate<S extends AnySchema>(location: string, schema: S | undefined, value: unknown): z.output<S> {
  if (!schema) return value as z.output<S>;
  const r = schema.safeParse(value);
  if (!r.success) {
    const issues = issuesOf(location, r.error);
    throw new ApiError('validation_failed', `invalid ${location}: ${issuesText(issues)}`, { issues });
  }
  return r.data;
}

function decodeParams(groups: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(groups ?? {})) {
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      throw new ApiError('bad_request', `path parameter ${k} is not valid URL encoding`);
    }
  }
  return out;
}

export function queryObject(url: URL): Record<string, string | string[]> {
  const q: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = q[k];
    q[k] = prev === undefined ? v : ([] as string[]).concat(prev, v);
  }
  return q;
}

/**
 * The events binding as handlers see it: the request id is attached, and a failure to record is
 * logged, never thrown. A handler emits after its change has happened, and that change cannot be
 * undone by the outbox being unwritable, so the request must not fail for it.
 */
function recordingEvents(inner: EventsBinding, requestId: string): EventsBinding {
  return {
    async send(event) {
      try {
        await inner.send({ ...event, requestId } as AppEvent);
      } catch (e) {
        console.error(
          `[${requestId}] event ${event.kind} was not recorded: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    },
  };
}

/** Turn anything thrown into the error model; unexpected errors never leak their message. */
export function toApiError(e: unknown, requestId: string): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ParseError) {
    console.error(`[${requestId}] parse error: ${e.message}`);
    return new ApiError(
      'bad_gateway',
      `could not read the output of ${e.parser}${e.line !== undefined ? ` (line ${e.line})` : ''}`,
    );
  }
  console.error(`[${requestId}] unexpected error:`, e);
  return internalError(requestId);
}

export function route<P extends AnySchema, Q extends AnySchema, B extends AnySchema, R extends AnySchema>(
  spec: RouteSpec<P, Q, B, R>,
): RouteModule {
  const path = fullPath(spec.path);
  const pattern = compilePath(path);
  const meta: RouteMeta = { method: spec.method, path, permission: spec.permission, summary: spec.summary };
  if (spec.sideEffects) meta.sideEffects = true;
  if (spec.examples?.length) meta.examples = spec.examples;
  if (spec.style?.contentType) meta.contentType = spec.style.contentType;
  const headSafe = !spec.sideEffects;
  const queryKeys = queryKeysOf(spec.query, `${spec.method} ${path}`);

  async function handle(
    call: Call,
    rawParams: Record<string, string>,
    env: Env,
    ctx: ExecutionContext = noopCtx,
  ): Promise<Reply> {
    const { requestId } = call;
    const vars = env?.VARS;
    const isHead = call.method === 'HEAD';
    try {
      const db = database(env);
      const principal = await authenticate(db, call.header('token'), Date.now(), env?.TOKENS_DIRECT);
      authorize(principal, spec.permission);

      const params = validate('params', spec.params, decodeParams(rawParams));
      const rawQuery = queryObject(call.url);
      refuseUnknownQueryKeys(rawQuery, queryKeys);
      const query = validate('query', spec.query, rawQuery);
      const rawBody = spec.method === 'GET' ? {} : parseJsonBody(call.bodyText);
      // a route that takes no body takes `{}` (the spec's "requests without parameters")
      const extra = spec.body ? undefined : Object.keys(rawBody)[0];
      if (extra !== undefined) throw validationFailed(`body.${extra}`, 'this route takes no body fields (send {})');
      const body = validate('body', spec.body, rawBody);

      const run = () =>
        spec.handler({
          params,
          query,
          body,
          env,
          ctx,
          requestId,
          principal,
          system: system(env, requestId),
          db,
          events: recordingEvents(events(env, requestId), requestId),
          vars,
          connection: call.connection,
        });
      const result = spec.lock ? await withLock(spec.lock, run) : await run();
      if (result instanceof JsonText) {
        const headers = baseHeaders(vars, requestId, spec.style);
        if (isHead) return { status: 200, headers, body: null };
        if (typeof result.text === 'string') return { status: 200, headers, body: result.text };
        return { status: 200, headers, body: null, chunks: result.text };
      }
      // plain answers (objects, arrays) never touch the global Response: on Node its first use
      // loads undici (~30 ms of a cold start's first request)
      if (isResponse(result)) {
        const headers: Record<string, string> = {};
        result.headers.forEach((v, k) => (headers[k] = v));
        return { status: result.status, headers, body: isHead || result.status === 204 ? null : await result.text() };
      }
      const checked = spec.response.safeParse(result);
      if (!checked.success) {
        console.error(
          `[${requestId}] response of ${spec.method} ${path} does not match its schema`,
          checked.error.issues,
        );
        throw internalError(requestId);
      }
      return jsonReply(result, 200, baseHeaders(vars, requestId, spec.style), isHead);
    } catch (e) {
      return errorReply(toApiError(e, requestId), vars, requestId, isHead, spec.style);
    }
  }

  /** Served alone (one bundle behind any Fetch-API server): the same pipeline, with one route. */
  async function fetch(request: Request, env: Env, ctx: ExecutionContext = noopCtx): Promise<Response> {
    const vars = env?.VARS;
    let call: Call | undefined;
    try {
      call = await callFromRequest(request, Number(vars?.settings?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES));
      if (call.method === 'OPTIONS')
        return responseFromReply(preflightReply(vars, call.requestId, [spec.method], headSafe));
      const isHead = call.method === 'HEAD' && spec.method === 'GET';
      if ((call.method !== spec.method && !isHead) || (isHead && !headSafe))
        throw methodNotAllowed([spec.method], headSafe);
      const match = pattern.exec(call.url.pathname);
      if (!match) throw new ApiError('route_not_found', `no route ${call.method} ${call.url.pathname}`);
      return responseFromReply(await handle(call, match.groups ?? {}, env, ctx));
    } catch (e) {
      const requestId = call?.requestId ?? crypto.randomUUID();
      return responseFromReply(
        errorReply(toApiError(e, requestId), vars, requestId, request.method === 'HEAD', spec.style),
      );
    }
  }

  return {
    meta,
    schemas: { params: spec.params, query: spec.query, body: spec.body, response: spec.response },
    fetch,
    handle,
  };
}
