import type { Vars } from './vars';

/** The Workers `Fetcher` shape: anything with a fetch(). Bindings that cross a process use it. */
export interface Fetcher {
  fetch(input: Request | string, init?: RequestInit): Promise<Response>;
}

/**
 * One binding operation as text (the fetch protocol's path, JSON body and answer) without a
 * Request, Headers or Response around it: `env.BINDING_POST`, which only the Deno entry sets
 * (runtime/isolate/deno-entry.ts), for its three Fetchers would only wrap this call in them
 * (measured: ~20 µs of an isolate's ~175 µs per request). `path` is `/<op>`.
 */
export type BindingPost = (path: string, body: string, requestId?: string) => Promise<BindingAnswer>;

/** A binding operation's answer as every transport carries it: the status and the JSON text. */
export interface BindingAnswer {
  status: number;
  body: string;
}

/* ---- DB: the subset of Cloudflare D1's API that routes use ---- */
export interface D1Meta {
  changes: number;
  last_row_id: number;
  duration: number;
}
export interface D1Result<T = Record<string, unknown>> {
  results: T[];
  success: boolean;
  meta: D1Meta;
}
export interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement;
  first<T = Record<string, unknown>>(column?: string): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  run(): Promise<D1Result<never>>;
  raw<T = unknown[]>(): Promise<T[]>;
}
export interface D1Database {
  prepare(sql: string): D1PreparedStatement;
  batch(statements: D1PreparedStatement[]): Promise<D1Result[]>;
  exec(sql: string): Promise<{ count: number; duration: number }>;
}

/* ---- EVENTS: a queue-style producer ---- */
/** `<area>.<object>.<past-tense verb>`: a two-segment kind does not compile (the producer refuses it too). */
export type EventKind = `${string}.${string}.${string}`;

export interface AppEvent {
  kind: EventKind;
  data: Record<string, unknown>;
}
export interface EventsBinding {
  send(event: AppEvent): Promise<void>;
}

/**
 * The SYSTEM service called as a method, when the host and the handlers share a process: no
 * Request, Response or JSON text in between. The host copies the payload and the result, so
 * neither side can change what the other holds. A refusal or failure comes back as data (what
 * the fetch protocol's error answer says), never as a thrown class: route bundles carry their own
 * copy of BindingError, so `instanceof` across the host/bundle line would not hold.
 */
export interface SystemDirect {
  call(op: string, payload: unknown, requestId?: string): Promise<DirectAnswer>;
}
export type DirectAnswer = { ok: true; value: unknown } | { ok: false; status: number; code: string; message: string };

/**
 * A token row by id, for a host that can look it up without a query per request (a short-lived
 * cache that a revocation empties at once: runtime/tokens.ts TokenCache). `touch` records a use.
 */
export interface TokenLookup {
  token(id: string): TokenRecord | null;
  /** records a use (the host's cache, or over the hop: runtime/isolate/hop.ts) */
  touch(id: string, at: number): void | Promise<void>;
}
export interface TokenRecord {
  id: string;
  name: string;
  hash: string;
  permissions: string;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

/**
 * What every route bundle receives as `env`. DB and EVENTS come either as objects (in-process,
 * or Miniflare's real D1) or, across a process boundary, as Fetchers under `DB_FETCH` and
 * `EVENTS_FETCH`. Separate names, because a Workers service-binding stub answers `in` and
 * `typeof` checks for any property name (JS RPC), so the shape cannot be sniffed. For the same
 * reason the in-process fast paths travel under their own keys, `SYSTEM_DIRECT` and
 * `TOKENS_DIRECT`, set only by the Node host for handlers in its own process; an isolate's env
 * never has them, and SYSTEM is then reached with its fetch protocol.
 */
export interface Env {
  SYSTEM: Fetcher;
  SYSTEM_DIRECT?: SystemDirect;
  TOKENS_DIRECT?: TokenLookup;
  DB?: D1Database;
  DB_FETCH?: Fetcher;
  EVENTS?: EventsBinding;
  EVENTS_FETCH?: Fetcher;
  /** set only by the Deno entry: the Fetchers' protocol as one call (see BindingPost) */
  BINDING_POST?: BindingPost;
  /** set only in an isolate the host spawned: marks the requests it forwards (core/hop.ts) */
  HOP_SECRET?: string;
  VARS: Vars;
}

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException?(): void;
}

/** Internal origin for binding requests; never resolved on a network. */
export const BINDING_ORIGIN = 'http://binding.internal';

/** The fetch protocol as a BindingPost, one per Fetcher (so a D1 client can be cached by it). */
const fetchPosts = new WeakMap<Fetcher, BindingPost>();
function postOver(binding: Fetcher): BindingPost {
  let post = fetchPosts.get(binding);
  if (!post) {
    post = async (path, body, requestId) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (requestId) headers['x-request-id'] = requestId;
      const res = await binding.fetch(`${BINDING_ORIGIN}${path}`, { method: 'POST', headers, body });
      return { status: res.status, body: await res.text() };
    };
    fetchPosts.set(binding, post);
  }
  return post;
}

/** How a request's binding calls travel: env.BINDING_POST where the runtime gives one, else the Fetcher's protocol. */
function transport(env: Env | undefined, binding: Fetcher): BindingPost {
  return env?.BINDING_POST ?? postOver(binding);
}

/** One binding operation: its JSON answer, or a BindingError with the answer's status, code and message. */
async function call<T>(post: BindingPost, op: string, payload: unknown, requestId?: string): Promise<T> {
  const { status, body: text } = await post(`/${op}`, JSON.stringify(payload), requestId);
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    throw new Error(`binding ${op}: non-JSON answer (status ${status})`);
  }
  if (status < 200 || status > 299) {
    const err = (parsed as { error?: { message?: string; code?: string } } | null)?.error;
    const e = new BindingError(op, status, err?.code ?? 'binding_error', err?.message ?? `status ${status}`);
    throw e;
  }
  return parsed as T;
}

/** A binding operation over `binding`'s fetch protocol, or over `post` when given (env.BINDING_POST). */
function rpc<T>(binding: Fetcher, op: string, payload: unknown, requestId?: string, post?: BindingPost): Promise<T> {
  return call<T>(post ?? postOver(binding), op, payload, requestId);
}

/** A binding refused or failed an operation (not a command's own non-zero exit). */
export class BindingError extends Error {
  constructor(
    readonly op: string,
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'BindingError';
  }
}

/** D1 over a Fetcher: used when the DB lives in another process (isolation mode, edge tests). */
class FetchD1Statement implements D1PreparedStatement {
  constructor(
    private readonly post: BindingPost,
    readonly sql: string,
    readonly params: unknown[] = [],
  ) {}
  bind(...values: unknown[]): D1PreparedStatement {
    return new FetchD1Statement(this.post, this.sql, values);
  }
  private rpc<T>(op: string, payload: unknown): Promise<T> {
    return call<T>(this.post, op, payload);
  }
  async first<T>(column?: string): Promise<T | null> {
    const row = await this.rpc<Record<string, unknown> | null>('db/first', { sql: this.sql, params: this.params });
    if (row === null) return null;
    return (column === undefined ? row : row[column]) as T;
  }
  all<T>(): Promise<D1Result<T>> {
    return this.rpc<D1Result<T>>('db/all', { sql: this.sql, params: this.params });
  }
  run(): Promise<D1Result<never>> {
    return this.rpc<D1Result<never>>('db/run', { sql: this.sql, params: this.params });
  }
  raw<T>(): Promise<T[]> {
    return this.rpc<T[]>('db/raw', { sql: this.sql, params: this.params });
  }
}

class FetchD1 implements D1Database {
  constructor(private readonly post: BindingPost) {}
  prepare(sql: string): D1PreparedStatement {
    return new FetchD1Statement(this.post, sql);
  }
  batch(statements: D1PreparedStatement[]): Promise<D1Result[]> {
    const list = statements.map((s) => {
      const st = s as FetchD1Statement;
      return { sql: st.sql, params: st.params };
    });
    return call<D1Result[]>(this.post, 'db/batch', { statements: list });
  }
  exec(sql: string): Promise<{ count: number; duration: number }> {
    return call(this.post, 'db/exec', { sql });
  }
}

const d1Cache = new WeakMap<object, D1Database>();
export function database(env: Env): D1Database {
  if (env.DB) return env.DB;
  const b = env.DB_FETCH;
  if (!b) throw new Error('no DB binding (DB or DB_FETCH)');
  // keyed by what the calls go through (the Deno entry's one BINDING_POST serves every request)
  const post = transport(env, b);
  let d = d1Cache.get(post);
  if (!d) {
    d = new FetchD1(post);
    d1Cache.set(post, d);
  }
  return d;
}

export function events(env: Env, requestId?: string): EventsBinding {
  if (env.EVENTS) return env.EVENTS;
  const b = env.EVENTS_FETCH;
  if (!b) throw new Error('no EVENTS binding (EVENTS or EVENTS_FETCH)');
  const post = transport(env, b);
  return {
    send: (event: AppEvent) => call<void>(post, 'events/send', { ...event, requestId }, requestId),
  };
}

export { rpc as bindingRpc };
