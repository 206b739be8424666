import http from 'node:http';
import net from 'node:net';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import type { BindingAnswer } from '../../handlers/core/bindings';
import type { BindingServer } from '../binding-server';

/**
 * Is `given` the secret? Compared in constant time; anything but a string is not. The binding
 * socket's requests and the Deno entry's hop preface (runtime/isolate/forward-framed.ts) both ask it.
 */
export function secretCheck(secret: string): (given: unknown) => boolean {
  const expected = Buffer.from(secret);
  return (given) => {
    if (typeof given !== 'string') return false;
    const g = Buffer.from(given);
    return g.length === expected.length && timingSafeEqual(g, expected);
  };
}

/** A refusal's JSON text, in the binding protocol's error shape. */
export const refusal = (code: string, message: string): string => JSON.stringify({ error: { code, message } });

/** Header every request on the binding socket carries: the per-start secret (docs/bindings-protocol.md). */
export const BINDING_SECRET_HEADER = 'x-ballast-binding-secret';
/** A binding payload larger than this is refused (413): file writes are the largest. */
export const BINDING_BODY_LIMIT = 64 * 1024 * 1024;

export interface BindingSocket {
  /** Absolute path of the Unix socket (mode 0600). */
  path: string;
  /** The per-start secret; handed only to the isolate the host spawns (never logged). */
  secret: string;
  /** Is this the secret (constant time)? */
  authorised(given: unknown): boolean;
  /**
   * One operation, as the socket runs it (an unknown op is 404, a failure 500, logged; never
   * rejects): the Deno entry's calls on the hop connection (runtime/isolate/forward-framed.ts).
   */
  answer(op: string, body: string, requestId: string | undefined): Promise<BindingAnswer>;
  close(): Promise<void>;
}

export interface BindingSocketOptions {
  bindings: BindingServer;
  path: string;
  /** Default: 32 random bytes, base64url. Tests may pin it. */
  secret?: string;
  log?: (line: string) => void;
  /** How long an idle keep-alive connection stays open (default 60 s). */
  idleTimeoutMs?: number;
  /** Called when a client connection ends (tests wait on it). */
  onConnectionEnd?: () => void;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

/** Is something answering on this Unix socket (another running host)? */
function answering(path: string): Promise<boolean> {
  return new Promise((done) => {
    const s = net.connect(path);
    s.once('connect', () => {
      s.destroy();
      done(true);
    });
    s.once('error', () => done(false));
  });
}

/**
 * A stale socket (left by a host that was killed) is replaced; a live one (another host) or a
 * file that is not a socket is an error: the host refuses to start rather than take it over.
 */
async function clearStale(path: string): Promise<void> {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket: refusing to replace it`);
  if (await answering(path)) throw new Error(`${path}: another process is serving the bindings (a second host?)`);
  unlinkSync(path);
}

/** An operation's path (`/system/…`, `/db/…`, `/events/send`, `/tokens/touch`) the socket serves. */
const isOp = (path: string) =>
  path.startsWith('/system/') || path.startsWith('/db/') || path === '/events/send' || path === '/tokens/touch';

/**
 * The SYSTEM, DB and EVENTS bindings on a Unix socket, for route code in another process
 * (workerd's Fetchers, any HTTP client). The protocol is the in-process fetch protocol
 * (binding-server.ts, handlers/core/bindings.ts) plus the secret, over HTTP/1.1 keep-alive
 * (docs/bindings-protocol.md). The Deno entry's calls do not come here: they ride the hop
 * connection (runtime/isolate/forward-framed.ts), which runs them with `answer`.
 */
export async function startBindingSocket(o: BindingSocketOptions): Promise<BindingSocket> {
  const secret = o.secret ?? randomBytes(32).toString('base64url');
  const authorised = secretCheck(secret);
  const { bindings } = o;
  const idleTimeoutMs = o.idleTimeoutMs ?? 60_000;
  /** One operation, whoever asked: an unknown op is 404, a failure 500 (logged). */
  const answer = (path: string, body: string, requestId: string | undefined): Promise<BindingAnswer> => {
    if (!isOp(path))
      return Promise.resolve({ status: 404, body: refusal('not_found', `unknown binding operation ${path}`) });
    return bindings.call(path, body, requestId).catch((e: unknown) => {
      o.log?.(`binding ${path} failed: ${(e as Error)?.stack ?? String(e)}`);
      return { status: 500, body: refusal('internal', `binding ${path} failed`) };
    });
  };
  const httpServer = http.createServer({ keepAlive: true }, (req, res) => {
    if (!authorised(req.headers[BINDING_SECRET_HEADER])) {
      req.resume();
      return json(res, 401, { error: { code: 'unauthorized', message: 'missing or wrong binding secret' } });
    }
    if (req.method !== 'POST') {
      req.resume();
      return json(res, 405, { error: { code: 'method_not_allowed', message: 'binding operations are POST' } });
    }
    // Deno's unix proxy sends the absolute form (http://binding.internal/db/all); workerd the origin form.
    const path = (req.url ?? '/').replace(/^[a-z]+:\/\/[^/]*/i, '').replace(/\?.*$/, '');
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > BINDING_BODY_LIMIT) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      if (tooLarge)
        return json(res, 413, {
          error: { code: 'payload_too_large', message: `binding payload exceeds ${BINDING_BODY_LIMIT} bytes` },
        });
      const rid = req.headers['x-request-id'];
      void answer(path, Buffer.concat(chunks).toString('utf8'), typeof rid === 'string' ? rid : undefined).then((a) => {
        res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(a.body) });
        res.end(a.body);
      });
    });
  });
  httpServer.keepAliveTimeout = idleTimeoutMs;
  // node:http checks how long a request head takes only for a server that listens itself; this
  // one is handed its connections, so each request head must arrive whole within the idle time
  // of the connection going quiet (a running op is not quiet: its timer starts at the answer)
  const heads = new WeakMap<net.Socket, NodeJS.Timeout>();
  const awaitHead = (socket: net.Socket) => {
    clearTimeout(heads.get(socket));
    heads.set(socket, setTimeout(() => socket.destroy(), idleTimeoutMs).unref());
  };
  httpServer.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    clearTimeout(heads.get(req.socket));
    res.once('finish', () => {
      if (!req.socket.destroyed) awaitHead(req.socket);
    });
  });
  // every connection, to end them on close (node:http tracks only the ones it accepted itself)
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (o.onConnectionEnd) socket.once('close', o.onConnectionEnd);
    // a client that connects and says nothing is dropped like one whose head stalls
    awaitHead(socket);
    socket.once('close', () => clearTimeout(heads.get(socket)));
    socket.on('error', () => socket.destroy());
    httpServer.emit('connection', socket);
  });
  await clearStale(o.path);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(o.path, 0o600);
  return {
    path: o.path,
    secret,
    authorised,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
        try {
          unlinkSync(o.path);
        } catch {
          // already gone
        }
      }),
  };
}
