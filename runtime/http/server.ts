import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { ApiError, internalError } from '../../handlers/core/errors';
import { BODY_TEXT, errorResponse, requestIdOf } from '../../handlers/core/http';
import { CONNECTION_HEADER } from '../../handlers/core/route';
import type { Env, ExecutionContext } from '../../handlers/core/bindings';
import type { HostConfig } from '../config';

export interface FetchHandler {
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Promise<Response>;
}

export interface ServerOptions {
  config: HostConfig;
  env: Env;
  handler: FetchHandler;
  accessLog?: (line: string) => void;
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
const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);
const HOP_BY_HOP = new Set(['transfer-encoding', 'content-length', 'connection', 'keep-alive']);

class BodyTooLarge extends Error {}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.pause();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * GET bodies cannot travel in a WHATWG Request, so top-level scalar fields of a JSON body on a GET
 * become query parameters (the spec's system-keys routes send `user` that way). The URL wins.
 */
export function mapGetBodyToQuery(url: URL, body: Buffer): void {
  const text = body.toString('utf8').trim();
  if (text === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', 'request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError('bad_request', 'a GET body must be a JSON object');
  }
  for (const [k, v] of Object.entries(parsed)) {
    if (url.searchParams.has(k)) continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') url.searchParams.set(k, String(v));
  }
}

function toHeaders(req: http.IncomingMessage): Headers {
  const h = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    // Only the host may say what the connection is: drop any copy a client sent.
    if (raw[i].toLowerCase() === CONNECTION_HEADER) continue;
    h.append(raw[i], raw[i + 1]);
  }
  h.set(CONNECTION_HEADER, JSON.stringify({ localAddress: req.socket.localAddress, remoteAddress: req.socket.remoteAddress }));
  return h;
}

async function writeResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((v, k) => {
    // Framing is ours to set: a Response from workerd may carry its own transfer-encoding.
    if (!HOP_BY_HOP.has(k)) headers[k] = v;
  });
  const text = (response as Response & { [BODY_TEXT]?: string })[BODY_TEXT];
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  if (body) headers['content-length'] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

export function startServer(o: ServerOptions): Promise<RunningServer> {
  const { config, env, handler } = o;
  let inFlight = 0;
  let closing = false;
  const pending = new Set<Promise<unknown>>();
  const ctx: ExecutionContext = {
    waitUntil(p) {
      pending.add(p);
      p.finally(() => pending.delete(p)).catch(() => undefined);
    },
  };

  const onRequest = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = performance.now();
    inFlight++;
    let requestId = '-';
    let status = 0;
    try {
      const url = new URL(req.url ?? '/', ORIGIN);
      const headers = toHeaders(req);
      const method = req.method ?? 'GET';
      let response: Response;
      try {
        let body: Buffer | undefined;
        const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
        if (hasBody) body = await readBody(req, config.limits.bodyBytes);
        if (body && method === 'GET') mapGetBodyToQuery(url, body);
        const request = new Request(url, { method, headers, body: body && !BODYLESS.has(method) ? (body as unknown as BodyInit) : undefined });
        requestId = requestIdOf(request);
        if (!request.headers.has('x-request-id')) request.headers.set('x-request-id', requestId);
        response = await withTimeout(handler.fetch(request, env, ctx), config.limits.requestTimeoutMs);
      } catch (e) {
        if (requestId === '-') requestId = crypto.randomUUID();
        const err =
          e instanceof BodyTooLarge ? new ApiError('payload_too_large', `request body exceeds ${config.limits.bodyBytes} bytes`)
          : e instanceof TimeoutError ? new ApiError('timeout', `request did not complete within ${config.limits.requestTimeoutMs} ms`)
          : e instanceof ApiError ? e
          : (process.stderr.write(`[${requestId}] host error: ${(e as Error)?.stack ?? String(e)}\n`),
            internalError(requestId));
        response = errorResponse(err, env.VARS, requestId, method === 'HEAD');
        if (e instanceof BodyTooLarge) res.setHeader('connection', 'close');
      }
      status = response.status;
      await writeResponse(res, response);
      o.accessLog?.(`${method} ${url.pathname} ${status} ${(performance.now() - started).toFixed(1)}ms ${requestId}`);
    } catch (e) {
      process.stderr.write(`[${requestId}] failed to answer: ${(e as Error)?.stack ?? String(e)}\n`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end();
    } finally {
      inFlight--;
    }
  };

  const server = config.tls
    ? https.createServer(tlsFiles(config.tls), (req, res) => void onRequest(req, res))
    : http.createServer((req, res) => void onRequest(req, res));
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
