import * as z from 'zod';
import { ApiError, internalError, issuesOf, issuesText, toApiError, validationFailed } from './errors';
import { queryKeysOf, refuseUnknownQueryKeys } from './query';
import { ANONYMOUS, authenticate, authorize, PUBLIC_PERMISSION, type Principal } from './auth';
import { hopTokenLookup } from './hop';
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
import { baseHeaders, errorReply, jsonReply, type ResponseStyle } from './http';
import { parseJsonBody, type Call, type ConnectionInfo, type Reply } from './pipeline';
import type { Vars } from './vars';
import { withLock } from './lock';
import {
  fullPath,
  type LongOperation,
  type Method,
  type RouteExample,
  type RouteMeta,
  type RouteModule,
} from './route-module';
import { createApp, type App } from './app';

export {
  API_BASE,
  fullPath,
  type ExampleRequest,
  type LongOperation,
  type Method,
  type RouteExample,
  type RouteMeta,
  type RouteModule,
} from './route-module';

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
  /** A request header (lower-case name), for the few routes that read one (Last-Event-ID). */
  header(name: string): string | null;
}

type AnySchema = z.ZodType;

export interface RouteSpec<P extends AnySchema, Q extends AnySchema, B extends AnySchema, R extends AnySchema> {
  method: Method;
  /** Relative to /api/v2 (`/kerberos/conf`), or absolute when it starts with `/api/`. itty syntax: `:name`. */
  path: string;
  /** `<area>:read` / `<area>:manage`, or `public` (no token: health and version only) */
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
  /** Every request runs as a job with this budget and these progress phases (see LongOperation). */
  long?: LongOperation;
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

const noopCtx: ExecutionContext = { waitUntil: () => undefined };

/** A handler's Response answer; anything whose prototype is Object's or Array's is not one. */
function isResponse(v: unknown): v is Response {
  if (v === null || typeof v !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto !== Object.prototype && proto !== Array.prototype && proto !== null && v instanceof Response;
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

export function route<P extends AnySchema, Q extends AnySchema, B extends AnySchema, R extends AnySchema>(
  spec: RouteSpec<P, Q, B, R>,
): RouteModule {
  const path = fullPath(spec.path);
  const meta: RouteMeta = { method: spec.method, path, permission: spec.permission, summary: spec.summary };
  if (spec.sideEffects) meta.sideEffects = true;
  if (spec.long) meta.long = spec.long;
  if (spec.examples?.length) meta.examples = spec.examples;
  if (spec.style?.contentType) meta.contentType = spec.style.contentType;
  const queryKeys = queryKeysOf(spec.query, `${spec.method} ${path}`);
  const isPublic = spec.permission === PUBLIC_PERMISSION;

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
      if (call.note) call.note.route = path;
      // a public route (health, version) is served without a token: no principal but ANONYMOUS
      const principal = isPublic
        ? ANONYMOUS
        : await authenticate(db, call.header('token'), Date.now(), env?.TOKENS_DIRECT ?? hopTokenLookup(env, call));
      if (call.note && !isPublic) call.note.token = { id: principal.tokenId, name: principal.name };
      if (!isPublic) authorize(principal, spec.permission);

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
          header: (name) => call.header(name),
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

  // Served alone (one bundle behind any Fetch-API server), a route is the app over that one
  // route: the same match, OPTIONS/405/HEAD branch and error mapping as the whole API.
  let alone: App | undefined;
  const mod: RouteModule = {
    meta,
    schemas: { params: spec.params, query: spec.query, body: spec.body, response: spec.response },
    fetch: (request, env, ctx) =>
      (alone ??= createApp([{ method: spec.method, path, sideEffects: spec.sideEffects, load: () => mod }], {
        style: spec.style,
      })).fetch(request, env, ctx),
    handle,
  };
  return mod;
}
