import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { ApiError, toApiError } from '../../handlers/core/errors';
import { errorReply } from '../../handlers/core/http';
import {
  BODYLESS,
  CONNECTION_HEADER,
  iteratorOf,
  mapGetBodyToQuery,
  requestIdFrom,
  type Call,
  type Reply,
} from '../../handlers/core/pipeline';
import type { Env, ExecutionContext } from '../../handlers/core/bindings';
import type { HostConfig } from '../config';
import { answers, byteLength } from './reply-batch';

export interface FetchHandler {
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
  /** In-process apps take the Call directly: no WHATWG Request or Response is built. */
  handle?(call: Call, env: Env, ctx?: ExecutionContext): Promise<Reply>;
}

/**
 * What the server asks of the job layer (runtime/jobs/gate.ts) for every request: run it (a
 * long route as a job, maybe answered 202 at once), and when the synchronous answer's time ran
 * out, whether a job goes on (the 504 names it) or the request was stopped.
 */
export interface RequestGate {
  /** absent: the handler runs requests through the gate itself (the host's in-process app) */
  run?(call: Call, answer: (call: Call) => Promise<Reply>): Promise<Reply>;
  timedOut(call: Call): { job: string } | undefined;
}

export interface ServerOptions {
  config: HostConfig;
  env: Env;
  handler: FetchHandler;
  gate?: RequestGate;
  /** Each answered request, once its answer is written (the request log, metrics, audit trail: runtime/ops). */
  onAnswered?: (a: AnsweredCall) => void;
}

/** A request the server answered: the call (with what its route noted), its status, its time. */
export interface AnsweredCall {
  call: Call;
  status: number;
  ms: number;
}

export interface RunningServer {
  server: http.Server | https.Server;
  port: number;
  url: string;
  reloadTls(): void;
  /** Stop accepting, let in-flight requests finish (bounded), then resolve. */
  shutdown(graceMs?: number): Promise<void>;
}

const ORIGIN = 'http://ballast.local';
const HOP_BY_HOP = new Set(['transfer-encoding', 'content-length', 'connection', 'keep-alive']);

class BodyTooLarge extends Error {}

/** A Content-Length past the limit: refused before a byte of the body is read (or asked for). */
function declaredTooLarge(req: http.IncomingMessage, limit: number): boolean {
  const declared = Number(req.headers['content-length']);
  return Number.isFinite(declared) && declared > limit;
}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredTooLarge(req, limit)) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        // the rest is the 413's to drop (answerTooLarge)
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** What a 413 reads and drops of the body the client is still sending, at most (bytes, time). */
export const DRAIN_BYTES = 16 * 1024 * 1024;
export const DRAIN_MS = 5000;

/**
 * The 413 goes out whole (content-length, `connection: close`) at once, and the connection is
 * closed only once the client has closed its side or sent the rest of the body, or after
 * DRAIN_BYTES / DRAIN_MS of it. Closing while the client still sends makes the kernel answer its
 * next bytes with a reset, and a reset throws away the answer the client has received but not
 * yet read: it saw "connection reset", not 413. This holds for a client that asked for
 * `100 Continue` and was refused too: it may send the body without waiting for the answer.
 */
function answerTooLarge(req: http.IncomingMessage, res: http.ServerResponse, reply: Reply): Promise<void> {
  const headers: Record<string, string> = { ...reply.headers, connection: 'close' };
  if (reply.body !== null) headers['content-length'] = String(byteLength(reply.body));
  res.writeHead(reply.status, headers);
  if (reply.body !== null) res.write(reply.body);
  if (req.complete || req.destroyed) {
    res.end();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    let dropped = 0;
    const finish = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', finish);
      req.off('close', finish);
      req.off('error', finish);
      res.end(); // node closes the connection (connection: close)
      resolve();
    };
    const onData = (c: Buffer) => {
      dropped += c.length;
      if (dropped > DRAIN_BYTES) finish();
    };
    const timer = setTimeout(finish, DRAIN_MS);
    req.on('data', onData);
    req.on('end', finish);
    req.on('close', finish);
    req.on('error', finish);
    req.resume();
  });
}

function* rawPairs(raw: string[]): Generator<readonly [string, string]> {
  for (let i = 0; i < raw.length; i += 2) yield [raw[i], raw[i + 1]];
}

/** For an app in another runtime (isolate mode): the call as a WHATWG Request. */
function requestOf(call: Call, req: http.IncomingMessage): Request {
  const h = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    // Only the host may say what the connection is: drop any copy a client sent.
    if (raw[i].toLowerCase() === CONNECTION_HEADER) continue;
    h.append(raw[i], raw[i + 1]);
  }
  h.set(CONNECTION_HEADER, JSON.stringify(call.connection));
  h.set('x-request-id', call.requestId);
  // GET bodies cannot travel in a WHATWG Request: their fields go onto the query here, as the
  // in-process app does (pipeline.ts), so an isolate answers a GET body the same way
  mapGetBodyToQuery(call);
  const hasBody = call.bodyText !== undefined && !BODYLESS.has(call.method);
  return new Request(call.url, { method: call.method, headers: h, body: hasBody ? call.bodyText : undefined });
}

async function* textPieces(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      if (text) yield text;
    }
  } finally {
    // the client went away: the isolate's stream is closed too
    await reader.cancel().catch(() => undefined);
  }
}

async function replyOf(response: Response, head: boolean): Promise<Reply> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    // Framing is ours to set: a Response from workerd may carry its own transfer-encoding.
    if (!HOP_BY_HOP.has(k)) headers[k] = v;
  });
  // an event stream (a job's events from an isolate) is written piece by piece as it comes
  if (!head && response.body && response.ok && headers['content-type']?.startsWith('text/event-stream'))
    return { status: response.status, headers, body: null, chunks: textPieces(response.body) };
  // the bytes as they came (an isolate's JSON, or a gzip docs asset the host app answered)
  const body = head || !response.body ? null : new Uint8Array(await response.arrayBuffer());
  return { status: response.status, headers, body };
}

/**
 * A reply of pieces (Reply.chunks): no content-length, so Node frames it with chunked
 * transfer-encoding (HTTP/1.0: the body ends when the connection closes). Each piece is written
 * when the socket has taken the previous ones (backpressure), so at most one piece and the
 * socket's buffer are held. A client that goes away stops the producer (return()), and so does
 * one that stops reading for `stallMs` (the connection is closed); a producer that throws part
 * way destroys the socket: the client sees a broken body, never a whole 200.
 */
async function writeChunks(
  res: http.ServerResponse,
  reply: Reply,
  chunks: Iterable<string> | AsyncIterable<string>,
  stallMs: number,
): Promise<void> {
  res.writeHead(reply.status, reply.headers);
  const it = iteratorOf(chunks);
  let gone = res.destroyed;
  let wake: (() => void) | null = null;
  const onClose = () => {
    gone = true;
    wake?.();
  };
  res.on('close', onClose);
  const onDrain = () => wake?.();
  res.on('drain', onDrain);
  try {
    for (;;) {
      if (gone) {
        await it.return?.();
        return;
      }
      const next = await it.next();
      if (next.done) break;
      if (!res.write(next.value, 'utf8') && !gone) {
        const stalled = setTimeout(() => res.destroy(), stallMs);
        await new Promise<void>((r) => (wake = r));
        clearTimeout(stalled);
      }
      wake = null;
    }
    res.end();
  } catch (e) {
    res.destroy();
    throw e;
  } finally {
    res.off('close', onClose);
    res.off('drain', onDrain);
  }
}

/** The 504 of a synchronous answer out of time: a job goes on (named), anything else was stopped. */
function timeoutError(call: Call, job: { job: string } | undefined, ms: number): ApiError {
  if (job)
    return new ApiError('timeout', `no answer within ${ms} ms; the job goes on: ${job.job}`, {
      details: { job: job.job },
    });
  return new ApiError('timeout', `request did not complete within ${ms} ms; it was stopped`);
}

export function startServer(o: ServerOptions): Promise<RunningServer> {
  const { config, env, handler, gate } = o;
  let inFlight = 0;
  let closing = false;
  const pending = new Set<Promise<unknown>>();
  const ctx: ExecutionContext = {
    waitUntil(p) {
      pending.add(p);
      p.finally(() => pending.delete(p)).catch(() => undefined);
    },
  };

  const stallMs = config.limits.requestTimeoutMs;

  const logFailure = (requestId: string, e: unknown) =>
    process.stderr.write(`[${requestId}] failed to answer: ${(e as Error)?.stack ?? String(e)}\n`);

  /** An answer that could not be written whole: a bare 500 if nothing went out, else a cut connection. */
  const failed = (res: http.ServerResponse, requestId: string, e: unknown) => {
    logFailure(requestId, e);
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end();
    } else res.destroy(); // part of a 200 went out: never end it as if it were whole
  };

  /** After the answer went out (or failed to): the request log, metrics and audit trail see it. */
  const settle = (res: http.ServerResponse, call: Call, status: number, started: number, error?: unknown) => {
    try {
      if (error !== undefined) failed(res, call.requestId, error);
      else o.onAnswered?.({ call, status, ms: performance.now() - started });
    } catch (e) {
      logFailure(call.requestId, e);
    } finally {
      inFlight--;
    }
  };

  const onRequest = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = performance.now();
    inFlight++;
    answers.arrive();
    let call: Call | undefined;
    try {
      const method = req.method ?? 'GET';
      const url = new URL(req.url ?? '/', ORIGIN);
      const given = req.headers['x-request-id'];
      call = {
        method,
        url,
        header: (name) => {
          const v = req.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        },
        headerPairs: () => rawPairs(req.rawHeaders),
        connection: { localAddress: req.socket.localAddress, remoteAddress: req.socket.remoteAddress },
        requestId: requestIdFrom(typeof given === 'string' ? given : undefined),
        note: o.onAnswered ? {} : undefined,
      };
      const reply = await answer(req, call);
      if (reply.tooLarge) await answerTooLarge(req, res, reply);
      else if (reply.chunks && reply.body === null) await writeChunks(res, reply, reply.chunks, stallMs);
      else {
        // one text or bytes: written with the turn's other answers (reply-batch.ts); settled there
        const answered = call;
        answers.write(res, reply, (e) => settle(res, answered, reply.status, started, e));
        return;
      }
      settle(res, call, reply.status, started);
    } catch (e) {
      if (call) settle(res, call, 0, started, e);
      else {
        failed(res, '-', e);
        inFlight--;
      }
    }
  };

  /** The handler's answer, or the JSON error of a body too large, a timeout or a throw. */
  const answer = async (req: http.IncomingMessage, call: Call): Promise<Reply & { tooLarge?: true }> => {
    const method = call.method;
    try {
      const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
      if (hasBody) call.bodyText = (await readBody(req, config.limits.bodyBytes)).toString('utf8');
      const answerOf = (c: Call): Promise<Reply> =>
        handler.handle
          ? handler.handle(c, env, ctx)
          : handler.fetch(requestOf(c, req), env, ctx).then((r) => replyOf(r, method === 'HEAD'));
      return await withTimeout(gate?.run ? gate.run(call, answerOf) : answerOf(call), config.limits.requestTimeoutMs);
    } catch (e) {
      const err =
        e instanceof BodyTooLarge
          ? new ApiError('payload_too_large', `request body exceeds ${config.limits.bodyBytes} bytes`)
          : e instanceof TimeoutError
            ? timeoutError(call, gate?.timedOut(call), config.limits.requestTimeoutMs)
            : toApiError(e, call.requestId);
      const reply = errorReply(err, env.VARS, call.requestId, method === 'HEAD');
      return e instanceof BodyTooLarge ? { ...reply, tooLarge: true } : reply;
    }
  };

  const server = config.tls
    ? https.createServer(tlsFiles(config.tls), (req, res) => void onRequest(req, res))
    : http.createServer((req, res) => void onRequest(req, res));
  // Node would answer `100 Continue` to every `Expect: 100-continue`: a body it will refuse is
  // refused instead, before the client sends it.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!declaredTooLarge(req, config.limits.bodyBytes)) res.writeContinue();
    void onRequest(req, res);
  });
  // What Node's parser rejects never reaches onRequest: answer it in the same JSON error shape.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const requestId = crypto.randomUUID();
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('headers_too_large', 'request headers are too large')
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ApiError('timeout', 'the request was not received in time')
          : new ApiError('bad_request', `malformed HTTP request (${err.code ?? 'parse error'})`);
    const reply = errorReply(error, env.VARS, requestId);
    const body = reply.body ?? '';
    const head = [
      `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? ''}`,
      ...Object.entries(reply.headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.end(
      `${head.join('\r\n')}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 30_000;
  server.requestTimeout = config.limits.requestTimeoutMs + 5000;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.listen.port, config.listen.host, () => {
      const port = (server.address() as AddressInfo).port;
      const scheme = config.tls ? 'https' : 'http';
      const hostPart = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
      resolve({
        server,
        port,
        url: `${scheme}://${hostPart}:${port}`,
        reloadTls() {
          if (!config.tls || !(server instanceof https.Server)) return;
          server.setSecureContext(tlsFiles(config.tls));
        },
        async shutdown(graceMs = config.limits.requestTimeoutMs) {
          if (closing) return;
          closing = true;
          const closed = new Promise<void>((r) => server.close(() => r()));
          server.closeIdleConnections();
          const deadline = Date.now() + graceMs;
          while ((inFlight > 0 || pending.size > 0) && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 20));
            server.closeIdleConnections();
          }
          server.closeAllConnections();
          await closed;
        },
      });
    });
  });
}

/**
 * The certificate (followed by the intermediate chain file when it exists) and the key, read now:
 * new connections get them, open ones keep what they negotiated.
 */
export function tlsFiles(tls: NonNullable<HostConfig['tls']>): SecureContextOptions {
  let cert = readFileSync(tls.cert, 'utf8');
  if (tls.chain) {
    try {
      const chain = readFileSync(tls.chain, 'utf8');
      cert = (cert.endsWith('\n') ? cert : `${cert}\n`) + chain;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  return { cert, key: readFileSync(tls.key) };
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError()), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
