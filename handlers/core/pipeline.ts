/**
 * One request pipeline, shared by every way a request arrives:
 * - the Node host builds a `Call` straight from the socket (no WHATWG objects) and writes the
 *   `Reply` text straight back;
 * - `dist/app.mjs` and a single route bundle (Workers module contract) turn a WHATWG Request into
 *   a `Call` once, and the `Reply` into a Response once.
 * The URL is parsed once, the path is matched once, the body is read, size-checked and parsed
 * once, and 404/405/HEAD/OPTIONS are answered in one place (app.ts).
 */
import { ApiError, validationFailed } from './errors';

/** Addresses of the HTTP connection, for routes that must not cut it (network lockout guard). */
export interface ConnectionInfo {
  localAddress?: string;
  remoteAddress?: string;
}

/**
 * Header through which an embedder that serves `app.fetch` behind its own server may tell the
 * app the connection's addresses. Only ever honoured on the WHATWG path, and only because the
 * embedder sets it deliberately (it must drop any copy a client sent); the Node host passes the
 * addresses as data and never reads it.
 */
export const CONNECTION_HEADER = 'x-ballast-connection';

export interface Call {
  method: string;
  url: URL;
  header(name: string): string | null;
  /** Every header as received (name, value), for a host that forwards the call (isolation mode). */
  headerPairs?(): Iterable<readonly [string, string]>;
  /** The request body as text (undefined: none), already checked against the size limit. */
  bodyText?: string;
  connection: ConnectionInfo;
  requestId: string;
  /** Filled in by the route for the host's request log, metrics and audit trail (the Node host sets it). */
  note?: CallNote;
}

/** What a route tells the host about a call it served: its pattern, and who called (never the secret). */
export interface CallNote {
  route?: string;
  token?: { id: string; name: string };
  /**
   * The row of the token the call presented (null: none, or unknown), looked up by a host that
   * forwards the call to an isolate, which decides whether it lets the token in.
   */
  presented?: { id: string; name: string } | null;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  /**
   * JSON text, or null for no body (HEAD, 204, 304, or `chunks`). Bytes only for the docs page's
   * static assets (gzip): written as they are, content-length their byte length.
   */
  body: string | Uint8Array<ArrayBuffer> | null;
  /**
   * A large answer produced piece by piece while it is written (fs/explore): the body is these
   * strings in order, `body` is null. Iterated once; the Node server writes each piece with
   * backpressure and chunked transfer-encoding, and stops (return()) when the client goes away.
   */
  chunks?: Iterable<string> | AsyncIterable<string>;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,64}$/;
export function requestIdFrom(given: string | null | undefined): string {
  return given && REQUEST_ID_PATTERN.test(given) ? given : crypto.randomUUID();
}

/** Deepest nesting of objects/arrays a body may have: enough for any real request. */
export const MAX_BODY_DEPTH = 32;

/** Nesting depth of a JSON text, counted without parsing it (so a 10,000-deep body costs O(n)). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/**
 * A request body as the routes see it: absent or blank → `{}`, else a JSON object (never null,
 * an array or a scalar), at most MAX_BODY_DEPTH deep, with no `__proto__` key anywhere.
 */
export function parseJsonBody(text: string | undefined, location = 'body'): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  if (jsonDepth(text) > MAX_BODY_DEPTH)
    throw new ApiError('bad_request', `the ${location} is nested deeper than ${MAX_BODY_DEPTH} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text, (key, v: unknown) => {
      if (key === '__proto__') throw new ProtoKey();
      return v;
    });
  } catch (e) {
    if (e instanceof ProtoKey) throw new ApiError('bad_request', `the ${location} has a "__proto__" key`);
    throw new ApiError('invalid_json', `the ${location} is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('bad_request', `the ${location} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}
class ProtoKey extends Error {}

/**
 * GET bodies cannot travel in a WHATWG Request, and the spec gives some GET routes body
 * parameters (system keys `user`), so the fields of a GET's JSON body become query parameters
 * (the URL wins), and the route then refuses any it does not take, as it does in the URL. A
 * field no query string can hold (null, an object, an array) is refused here rather than
 * dropped: a body field is never silently ignored.
 */
export function mapGetBodyToQuery(call: Call): void {
  if (call.method !== 'GET' || call.bodyText === undefined) return;
  const body = parseJsonBody(call.bodyText);
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw validationFailed(`body.${k}`, "a GET's body fields are query parameters: a string, number or boolean");
    if (!call.url.searchParams.has(k)) call.url.searchParams.set(k, String(v));
  }
}

function connectionFromHeader(raw: string | null): ConnectionInfo {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as ConnectionInfo;
    return { localAddress: v.localAddress, remoteAddress: v.remoteAddress };
  } catch {
    return {};
  }
}

/** What a request body may be when VARS.settings.maxBodyBytes does not say (the host sets limits.bodyBytes). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Methods whose request body is never read (a WHATWG Request cannot carry one). */
export const BODYLESS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** WHATWG Request → Call (the Workers entry points). Reads the body once, bounded. */
export async function callFromRequest(request: Request, maxBodyBytes: number): Promise<Call> {
  const headers = request.headers;
  let body: Uint8Array | null = null;
  if (!BODYLESS.has(request.method) && request.body) {
    const declared = Number(headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes)
      throw new ApiError('payload_too_large', `request body exceeds ${maxBodyBytes} bytes`);
    body = new Uint8Array(await request.arrayBuffer());
  }
  return callFromParts(
    request.method,
    new URL(request.url),
    (name) => headers.get(name),
    () => headers.entries(),
    body,
    maxBodyBytes,
  );
}

/**
 * A Call from a request's parts, however they arrived (a WHATWG Request above; the Deno entry's
 * framed hop, runtime/isolate/deno-hop.ts): `body` null when the request has none.
 */
export function callFromParts(
  method: string,
  url: URL,
  header: (name: string) => string | null,
  headerPairs: () => Iterable<readonly [string, string]>,
  body: Uint8Array | null,
  maxBodyBytes: number,
): Call {
  const call: Call = {
    method,
    url,
    header,
    headerPairs,
    connection: connectionFromHeader(header(CONNECTION_HEADER)),
    requestId: requestIdFrom(header('x-request-id')),
  };
  if (body !== null && !BODYLESS.has(method)) {
    if (body.length > maxBodyBytes)
      throw new ApiError('payload_too_large', `request body exceeds ${maxBodyBytes} bytes`);
    call.bodyText = new TextDecoder().decode(body);
  }
  return call;
}

/** The pieces of a reply, sync or async, as one kind of iterator (await its results). */
export function iteratorOf(chunks: Iterable<string> | AsyncIterable<string>): Iterator<string> | AsyncIterator<string> {
  return Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : chunks[Symbol.iterator]();
}

/** Reply → WHATWG Response (the Workers entry points). */
export function responseFromReply(reply: Reply): Response {
  if (reply.chunks) {
    const it = iteratorOf(reply.chunks);
    const utf8 = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await it.next();
        if (next.done) controller.close();
        else controller.enqueue(utf8.encode(next.value));
      },
      async cancel() {
        await it.return?.();
      },
    });
    return new Response(stream, { status: reply.status, headers: reply.headers });
  }
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}
