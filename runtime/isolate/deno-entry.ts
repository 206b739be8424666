/**
 * The Deno entry (built by build.mjs into dist/deno.mjs; no node: imports). The host spawns
 * `deno run` on it with least permissions (runtime/isolate/deno.ts) and writes ONE line of JSON on
 * its stdin: the binding socket, the per-start secrets (binding socket, hop), the Unix socket to
 * serve on and VARS. It
 * serves dist/app.mjs with Deno.serve; SYSTEM, DB and EVENTS are Fetchers that reach the host's
 * binding socket (docs/bindings-protocol.md) over framed connections (runtime/bindings/frames.ts:
 * a one-line head and the JSON text each way) over Deno.connect (measured: an HTTP/1.1 client
 * over Deno.connect was twice as fast per call as fetch() through a Unix-proxy HttpClient, and
 * needs no net permission for a host name; the framing then took ~25 µs of the host's CPU off
 * each call). When stdin closes (the host is gone) it exits.
 */
import { MAX_FRAME_HEAD, parseAnswerHead, prefaceOf, requestHeadOf } from '../bindings/frames';

interface DenoConn {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}
interface DenoApi {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writeSync(p: Uint8Array): number };
  connect(o: { transport: 'unix'; path: string }): Promise<DenoConn>;
  serve(
    o: { path: string; onListen?: (addr: unknown) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void> };
  exit(code: number): never;
}
declare const Deno: DenoApi;

interface Init {
  bindingSocket: string;
  secret: string;
  hopSecret: string;
  listen: string;
  vars: unknown;
}
interface AppModule {
  default: { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> };
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const NEWLINE = 10;

/** The host closed an idle connection before this request got any answer byte: safe to resend. */
class StaleConnection extends Error {
  constructor() {
    super('the binding socket closed the connection');
  }
}

/** One keep-alive connection to the binding socket; one request at a time. */
class BindingConn {
  /** what was read and not yet consumed */
  private buf = new Uint8Array(0);
  /**
   * Every read lands here (one buffer per connection, not a fresh 64 KiB per read); an answer
   * that fits one read, as nearly all do, is then a single copy out of it.
   */
  private readonly chunk = new Uint8Array(64 * 1024);
  /** what a new connection sends before its first request (frames.ts prefaceOf); then nothing */
  preface = '';
  constructor(private readonly conn: DenoConn) {}

  private async more(): Promise<void> {
    const n = await this.conn.read(this.chunk);
    if (n === null) throw this.buf.length === 0 ? new StaleConnection() : new Error('binding socket closed mid-answer');
    if (this.buf.length === 0) {
      this.buf = this.chunk.slice(0, n);
      return;
    }
    const next = new Uint8Array(this.buf.length + n);
    next.set(this.buf);
    next.set(this.chunk.subarray(0, n), this.buf.length);
    this.buf = next;
  }

  /** One framed request (runtime/bindings/frames.ts): its head and JSON text out, the answer in. */
  async post(head: string, body: Uint8Array): Promise<{ status: number; body: string }> {
    const h = enc.encode(this.preface + head);
    this.preface = '';
    const out = new Uint8Array(h.length + body.length);
    out.set(h);
    out.set(body, h.length);
    try {
      for (let off = 0; off < out.length;) off += await this.conn.write(out.subarray(off));
    } catch {
      // the host runs an op only once the whole request arrived: nothing happened, resend it
      throw new StaleConnection();
    }
    let nl = this.buf.indexOf(NEWLINE);
    while (nl < 0) {
      if (this.buf.length > MAX_FRAME_HEAD) throw new Error('binding socket: answer head too long');
      await this.more();
      nl = this.buf.indexOf(NEWLINE);
    }
    const line = dec.decode(this.buf.subarray(0, nl));
    const answer = parseAnswerHead(line);
    if (!answer) throw new Error(`binding socket: unexpected answer ${JSON.stringify(line.slice(0, 80))}`);
    while (this.buf.length < nl + 1 + answer.length) await this.more();
    const text = dec.decode(this.buf.subarray(nl + 1, nl + 1 + answer.length));
    this.buf = this.buf.slice(nl + 1 + answer.length);
    return { status: answer.status, body: text };
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** Idle connections to the binding socket, reused (keep-alive); a failed one is dropped. */
class BindingPool {
  private readonly idle: BindingConn[] = [];
  constructor(
    private readonly path: string,
    private readonly secret: string,
  ) {}

  async post(path: string, requestId: string | null, body: string): Promise<{ status: number; body: string }> {
    const bytes = enc.encode(body);
    // a request id that is not printable ASCII is left out (the host's server made or checked it)
    const head = requestHeadOf(path, requestId, bytes.length);
    const reused = this.idle.pop();
    try {
      if (reused) return await this.send(reused, head, bytes);
    } catch (e) {
      if (!(e instanceof StaleConnection)) throw e;
    }
    return this.send(await this.open(), head, bytes);
  }

  /** A new framed connection: its preface (the secret) goes out with its first request. */
  private async open(): Promise<BindingConn> {
    const conn = new BindingConn(await Deno.connect({ transport: 'unix', path: this.path }));
    conn.preface = prefaceOf(this.secret);
    return conn;
  }

  private async send(conn: BindingConn, head: string, bytes: Uint8Array): Promise<{ status: number; body: string }> {
    try {
      const answer = await conn.post(head, bytes);
      this.idle.push(conn);
      return answer;
    } catch (e) {
      conn.close();
      throw e;
    }
  }
}

async function main(): Promise<void> {
  const reader = Deno.stdin.readable.getReader();
  const dec = new TextDecoder();
  let text = '';
  let init: Init | undefined;
  while (!init) {
    const { value, done } = await reader.read();
    if (value) text += dec.decode(value, { stream: true });
    const nl = text.indexOf('\n');
    if (nl >= 0) init = JSON.parse(text.slice(0, nl)) as Init;
    else if (done) throw new Error('no init line on stdin');
  }
  const app = ((await import(new URL('./app.mjs', import.meta.url).href)) as AppModule).default;
  const pool = new BindingPool(init.bindingSocket, init.secret);
  // One Fetcher for the three bindings: the path (/system/…, /db/…, /events/send) names the op.
  const binding = {
    async fetch(input: Request | string, reqInit?: RequestInit): Promise<Response> {
      const request = typeof input === 'string' ? undefined : input;
      const url = new URL(typeof input === 'string' ? input : input.url);
      const headers = new Headers(reqInit?.headers ?? request?.headers);
      const body = typeof reqInit?.body === 'string' ? reqInit.body : request ? await request.text() : '';
      const a = await pool.post(url.pathname, headers.get('x-request-id'), body);
      return new Response(a.body, { status: a.status, headers: { 'content-type': 'application/json' } });
    },
  };
  const env = {
    SYSTEM: binding,
    DB_FETCH: binding,
    EVENTS_FETCH: binding,
    // what the routes' binding calls use here (handlers/core/bindings.ts BindingPost): the same
    // operation as the Fetchers', without building a Request and a Response around each
    BINDING_POST: (path: string, body: string, requestId?: string) => pool.post(path, requestId ?? null, body),
    HOP_SECRET: init.hopSecret,
    VARS: init.vars,
  };
  const ctx = {
    waitUntil(p: Promise<unknown>) {
      p.catch(() => undefined);
    },
  };
  Deno.serve(
    {
      path: init.listen,
      onListen: () => {
        Deno.stdout.writeSync(new TextEncoder().encode('ready\n'));
      },
    },
    (request) => app.fetch(request, env, ctx),
  );
  // stdin stays open for as long as the host lives; its end means the host is gone.
  for (;;) {
    const { done } = await reader.read();
    if (done) Deno.exit(0);
  }
}

main().catch((e: unknown) => {
  console.error(`ballast deno entry: ${e instanceof Error ? e.message : String(e)}`);
  Deno.exit(1);
});
