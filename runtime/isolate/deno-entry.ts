/**
 * The Deno entry (built by build.mjs into dist/deno.mjs; no node: imports). The host spawns
 * `deno run` on it with least permissions (runtime/isolate/deno.ts) and writes ONE line of JSON on
 * its stdin: the binding socket, the per-start secrets (binding socket, hop), the Unix socket to
 * serve on and VARS. It
 * serves dist/app.mjs on that socket to the host's framed hop (deno-hop.ts; the host is its only
 * client, so it need not be HTTP); SYSTEM, DB and EVENTS are Fetchers that reach the host's
 * binding socket (docs/bindings-protocol.md) over framed connections (runtime/bindings/frames.ts:
 * a one-line head and the JSON text each way) over Deno.connect (measured: an HTTP/1.1 client
 * over Deno.connect was twice as fast per call as fetch() through a Unix-proxy HttpClient, and
 * needs no net permission for a host name; the framing then took ~25 µs of the host's CPU off
 * each call). When stdin closes (the host is gone) it exits.
 */
import { MAX_FRAME_HEAD, parseAnswerHead, prefaceOf, requestHeadOf } from '../bindings/frames';
import { ConnReader, joined, writeAll, type DenoConn } from './deno-conn';
import { serveHopConnection, type HopApp } from './deno-hop';
import { DEFAULT_MAX_BODY_BYTES, type Call, type Reply } from '../../handlers/core/pipeline';
interface DenoApi {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writeSync(p: Uint8Array): number };
  connect(o: { transport: 'unix'; path: string }): Promise<DenoConn>;
  listen(o: { transport: 'unix'; path: string }): AsyncIterable<DenoConn>;
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
  handle(call: Call, env: unknown, ctx: unknown): Promise<Reply>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The host closed an idle connection before this request got any answer byte: safe to resend. */
class StaleConnection extends Error {
  constructor() {
    super('the binding socket closed the connection');
  }
}

/** One keep-alive connection to the binding socket; one request at a time. */
class BindingConn {
  private readonly reader: ConnReader;
  /** what a new connection sends before its first request (frames.ts prefaceOf); then nothing */
  preface = '';
  constructor(private readonly conn: DenoConn) {
    this.reader = new ConnReader(conn);
  }

  /** One framed request (runtime/bindings/frames.ts): its head and JSON text out, the answer in. */
  async post(head: string, body: Uint8Array): Promise<{ status: number; body: string }> {
    const h = enc.encode(this.preface + head);
    this.preface = '';
    try {
      await writeAll(this.conn, joined(h, body));
    } catch {
      // the host runs an op only once the whole request arrived: nothing happened, resend it
      throw new StaleConnection();
    }
    const line = await this.reader.line(MAX_FRAME_HEAD);
    if (line === null) throw new StaleConnection();
    const answer = parseAnswerHead(line);
    if (!answer) throw new Error(`binding socket: unexpected answer ${JSON.stringify(line.slice(0, 80))}`);
    return { status: answer.status, body: dec.decode(await this.reader.take(answer.length)) };
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
  const app = (await import(new URL('./app.mjs', import.meta.url).href)) as AppModule;
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
  // the host's requests arrive framed (deno-hop.ts), not as HTTP, all on one connection
  const listener = Deno.listen({ transport: 'unix', path: init.listen });
  Deno.stdout.writeSync(new TextEncoder().encode('ready\n'));
  void (async () => {
    const hopApp: HopApp = {
      handle: (call) => app.handle(call, env, ctx),
      fetch: (request) => app.default.fetch(request, env, ctx),
      // the limit the app's fetch applies (app.ts fetchVia)
      maxBodyBytes: Number(
        (init.vars as { settings?: { maxBodyBytes?: number } } | null)?.settings?.maxBodyBytes ??
          DEFAULT_MAX_BODY_BYTES,
      ),
    };
    for await (const conn of listener) void serveHopConnection(conn, hopApp);
  })();
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
