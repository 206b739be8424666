import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import { tokenIdOf } from '../../handlers/core/auth';
import type { TokenLookup, TokenRecord } from '../../handlers/core/bindings';
import { toApiError } from '../../handlers/core/errors';
import { HOP_SECRET_HEADER, TOKEN_ROW_HEADER, encodeTokenRow } from '../../handlers/core/hop';
import { errorReply } from '../../handlers/core/http';
import {
  BODYLESS,
  callFromRequest,
  CONNECTION_HEADER,
  DEFAULT_MAX_BODY_BYTES,
  mapGetBodyToQuery,
  responseFromReply,
  type Call,
  type Reply,
} from '../../handlers/core/pipeline';
import type { Vars } from '../../handlers/core/vars';
import { importModule } from '../launcher-bridge';
import { answers } from '../http/reply-batch';

/** Where an isolate listens: a Unix socket (Deno, workerd). */
export type IsolateAddress = { socketPath: string } | { host: string; port: number };

/** How the host hands calls to an isolate (HTTP through undici here, or framed: forward-framed.ts). */
export interface Forwarder {
  handle(call: Call): Promise<Reply>;
  fetch(request: Request): Promise<Response>;
  close(): void;
}

/** What the host adds to each forwarded request (handlers/core/hop.ts). */
export interface HopOptions {
  /** the per-start secret the isolate was given as env.HOP_SECRET */
  secret: string;
  /** the host's token cache: the calling token's row travels with the request */
  tokens?: TokenLookup;
  /** the host's VARS (the body limit of a request that arrives as a WHATWG Request) */
  vars?: Vars;
}

/** Connection-level headers this hop owns; the host's server sets its own framing. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);
/**
 * Not passed on from the client: accept-encoding (the host's server writes the answer as it is,
 * so the isolate must not compress it, as Deno.serve and workerd would for a gzip-accepting
 * client), expect (the host has read the whole body already), and what only the host may say
 * (the connection, the request id it chose, the hop secret and token row).
 */
const DROPPED = new Set([
  ...HOP,
  // hop-by-hop too (RFC 9110 7.6.1): the client's upgrade or TE is for the host's server, not the isolate's
  'upgrade',
  'te',
  'proxy-connection',
  'accept-encoding',
  'expect',
  'x-request-id',
  CONNECTION_HEADER,
  HOP_SECRET_HEADER,
  TOKEN_ROW_HEADER,
]);

/**
 * Token rows as the header carries them, by row: the host's cache hands out the same row object
 * until the row changes (a use recorded, a revocation), so each is encoded once, not per request.
 */
const encodedRows = new WeakMap<TokenRecord, string>();
function tokenRowHeader(row: TokenRecord | null): string {
  if (row === null) return encodeTokenRow(null);
  let text = encodedRows.get(row);
  if (text === undefined) encodedRows.set(row, (text = encodeTokenRow(row)));
  return text;
}

function headersOut(call: Call, hop: HopOptions): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of call.headerPairs?.() ?? []) {
    const k = name.toLowerCase();
    if (DROPPED.has(k)) continue;
    const had = out[k];
    out[k] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  out.host = call.url.host;
  out[CONNECTION_HEADER] = JSON.stringify(call.connection);
  out['x-request-id'] = call.requestId;
  out[HOP_SECRET_HEADER] = hop.secret;
  const id = tokenIdOf(call.header('token'));
  if (id !== undefined && hop.tokens) {
    const row = hop.tokens.token(id);
    out[TOKEN_ROW_HEADER] = tokenRowHeader(row);
    // the request log names the token from this row if the isolate lets it in
    if (call.note) call.note.presented = row;
  }
  return out;
}

/**
 * What goes to the isolate for a call, whichever framing carries it: the headers (headersOut, and
 * the body's byte length when there is a body) and the body's text. GET bodies cannot travel to a
 * WHATWG server: their fields go onto the query here, as the in-process app does (pipeline.ts),
 * so an isolate answers a GET body the same way.
 */
export function outgoing(
  call: Call,
  hop: HopOptions,
): { headers: Record<string, string | string[]>; body: string | null; bodyLength: number } {
  const headers = headersOut(call, hop);
  mapGetBodyToQuery(call);
  const body = call.bodyText !== undefined && !BODYLESS.has(call.method) ? call.bodyText : null;
  const bodyLength = body === null ? 0 : Buffer.byteLength(body);
  if (body !== null) headers['content-length'] = String(bodyLength);
  return { headers, body, bodyLength };
}

/** Pieces of an event stream queued for the host's server before it pauses the isolate's socket. */
const QUEUED_PIECES = 16;

/** What StreamedPieces needs of the connection an event stream arrives on (undici's controller is one). */
export interface Flow {
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  abort(reason: Error): void;
}

/**
 * An event stream's pieces as they arrive, for Reply.chunks: the isolate's socket is paused while
 * the host's server has not taken QUEUED_PIECES of them, and the request is aborted (the isolate
 * sees its stream closed) when the consumer stops early (the client went away).
 */
export class StreamedPieces {
  private readonly queue: string[] = [];
  private readonly utf8 = new StringDecoder('utf8');
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;
  constructor(private readonly controller: Flow) {}

  push(c: Buffer): void {
    const text = this.utf8.write(c);
    if (text) this.queue.push(text);
    if (this.queue.length >= QUEUED_PIECES) this.controller.pause();
    this.signal();
  }
  end(): void {
    const rest = this.utf8.end();
    if (rest) this.queue.push(rest);
    this.ended = true;
    this.signal();
  }
  fail(e: Error): void {
    this.failure = e;
    this.signal();
  }
  private signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *pieces(): AsyncGenerator<string> {
    try {
      for (;;) {
        const piece = this.queue.shift();
        if (piece !== undefined) {
          if (this.queue.length === 0 && this.controller.paused) this.controller.resume();
          yield piece;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      // the client went away: the isolate's stream is closed too
      if (!this.ended && !this.failure) this.controller.abort(new Error('the client went away'));
    }
  }
}

/** The isolate's answer head as the host's reply carries it: hop headers and its date dropped, repeats joined. */
export function headersIn(given: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in given) {
    const v = given[k];
    if (v === undefined || HOP.has(k) || k === 'date') continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

type PoolClass = typeof import('undici').Pool;
/**
 * undici's Pool by its own module: loading only what a Pool needs is ~30 ms of CPU against ~100 ms
 * for the whole package (fetch, WebSocket, caches...), which is not in the host bundle's code
 * cache. The package (pinned by the lockfile) has no `exports` map, so the path is reachable;
 * should it move, the package's public export is used instead (test/host/isolate-forward.test.ts
 * checks that this path is the package's Pool).
 */
export const UNDICI_POOL_MODULE = 'undici/lib/dispatcher/pool.js';
let undici: Promise<PoolClass> | undefined;
/**
 * undici's Pool, imported once. startIsolateProcess asks for it before it spawns the isolate, so
 * the load overlaps the isolate's own start (Deno's cold start, 20 alternating starts: 585 ms
 * before undici, 580 ms with this module, 648 ms with the whole package).
 */
export function loadUndici(): Promise<PoolClass> {
  return (undici ??= importModule<{ default: PoolClass }>(UNDICI_POOL_MODULE).then(
    (m) => m.default,
    () => importModule<typeof import('undici')>('undici').then((m) => m.Pool),
  ));
}

/**
 * Forwards a Call to the isolate's HTTP server over keep-alive connections and reads its answer
 * into a Reply: no WHATWG Request or Response on the host's side of the hop. The host stays the
 * public listener (TLS, access log, limits); `fetch` is the same for a WHATWG caller (an
 * embedder's `Ballast.fetch`, the health probe).
 *
 * The client is undici's Pool through its callback interface (dispatch): measured against
 * node:http's Agent on the DB route through Deno, ~35 µs less host CPU per request (~12%). It is
 * loaded when an isolate starts (loadUndici), so an in-process host never loads it. No timeouts of its
 * own: the host's deadlines (the route's, a job's budget) end a request, and a job's event
 * stream may be quiet for longer than any fixed idle limit.
 */
export async function forwarder(address: IsolateAddress, hop: HopOptions): Promise<Forwarder> {
  const Pool = await loadUndici();
  const limits = { connections: 64, headersTimeout: 0, bodyTimeout: 0 };
  const pool =
    'socketPath' in address
      ? new Pool('http://isolate.internal', { ...limits, socketPath: address.socketPath })
      : new Pool(`http://${address.host}:${address.port}`, limits);
  const handle = (call: Call): Promise<Reply> => {
    const out = outgoing(call, hop);
    const body = out.body === null ? null : Buffer.from(out.body, 'utf8');
    return new Promise<Reply>((resolve, reject) => {
      let status = 502;
      let headers: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let streamed: StreamedPieces | undefined;
      pool.dispatch(
        {
          method: call.method as Dispatcher.HttpMethod,
          path: call.url.pathname + call.url.search,
          headers: out.headers,
          body,
        },
        {
          onRequestStart() {},
          onResponseStart(controller, code, given) {
            status = code;
            headers = headersIn(given);
            if (isEventStream(call.method, status, headers)) {
              streamed = new StreamedPieces(controller);
              resolve({ status, headers, body: null, chunks: streamed.pieces() });
            } else chunks.length = 0;
          },
          onResponseData(_controller, c) {
            if (streamed) streamed.push(c);
            else chunks.push(c);
          },
          onResponseEnd() {
            if (streamed) return streamed.end();
            // to its client with the turn's other answers (runtime/http/reply-batch.ts)
            answers.arrive();
            resolve({ status, headers, body: replyBody(call.method, status, chunks) });
          },
          onResponseError(_controller, e) {
            if (streamed) streamed.fail(e);
            else reject(e);
          },
        },
      );
    });
  };
  return { handle, fetch: fetchOver(handle, hop), close: () => void pool.destroy().catch(() => undefined) };
}

/**
 * An event stream (a job's events) goes on while the job runs: its pieces are passed on as they
 * come, not collected to the end.
 */
export const isEventStream = (method: string, status: number, headers: Record<string, string>): boolean =>
  method !== 'HEAD' &&
  status >= 200 &&
  status < 300 &&
  (headers['content-type']?.startsWith('text/event-stream') ?? false);

/** An answer's bytes as the reply's body: none for HEAD, 204 and 304. */
export function replyBody(method: string, status: number, chunks: Buffer[]): Uint8Array<ArrayBuffer> | null {
  if (method === 'HEAD' || status === 204 || status === 304) return null;
  const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  return new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length);
}

/** `fetch` for a WHATWG caller (an embedder's `Ballast.fetch`, the health probe) over a forwarder's handle. */
export function fetchOver(
  handle: (call: Call) => Promise<Reply>,
  hop: HopOptions,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const maxBody = Number(hop.vars?.settings?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    let call: Call;
    try {
      call = await callFromRequest(request, maxBody);
    } catch (e) {
      const requestId = crypto.randomUUID();
      return responseFromReply(errorReply(toApiError(e, requestId), hop.vars, requestId, request.method === 'HEAD'));
    }
    return responseFromReply(await handle(call));
  };
}
