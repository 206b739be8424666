/**
 * The Deno entry (built by build.mjs into dist/deno.mjs; no node: imports). The host spawns
 * `deno run` on it with least permissions (runtime/isolate/deno.ts) and writes ONE line of JSON on
 * its stdin: the binding socket, the per-start secrets (binding socket, hop), the Unix socket to
 * serve on and VARS. It
 * serves dist/app.mjs with Deno.serve; SYSTEM, DB and EVENTS are Fetchers that reach the host's
 * binding socket (docs/bindings-protocol.md) with a minimal HTTP/1.1 keep-alive client over
 * Deno.connect (measured: twice as fast per call as fetch() through a Unix-proxy HttpClient, and
 * it needs no net permission for a host name). When stdin closes (the host is gone) it exits.
 */

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

const SECRET_HEADER = 'x-ballast-binding-secret';
const enc = new TextEncoder();
const dec = new TextDecoder();
/** Where the head of an answer ends (its CRLFCRLF), searched with the native indexOf; -1 if not yet in. */
function indexOfHeaderEnd(b: Uint8Array): number {
  for (let i = b.indexOf(13); i >= 0 && i + 3 < b.length; i = b.indexOf(13, i + 1))
    if (b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  return -1;
}

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

  /** The host answers every binding request with content-length (runtime/bindings/socket.ts). */
  async post(head: string, body: Uint8Array): Promise<{ status: number; body: string }> {
    const h = enc.encode(head);
    const out = new Uint8Array(h.length + body.length);
    out.set(h);
    out.set(body, h.length);
    try {
      for (let off = 0; off < out.length;) off += await this.conn.write(out.subarray(off));
    } catch {
      // the host runs an op only once the whole request arrived: nothing happened, resend it
      throw new StaleConnection();
    }
    let end = indexOfHeaderEnd(this.buf);
    while (end < 0) {
      await this.more();
      end = indexOfHeaderEnd(this.buf);
    }
    const lines = dec.decode(this.buf.subarray(0, end)).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1]);
    const lengthLine = lines.find((l) => /^content-length:/i.test(l));
    if (!status || !lengthLine) throw new Error(`binding socket: unexpected answer ${lines[0]}`);
    const length = Number(lengthLine.slice(lengthLine.indexOf(':') + 1).trim());
    while (this.buf.length < end + 4 + length) await this.more();
    const text = dec.decode(this.buf.subarray(end + 4, end + 4 + length));
    this.buf = this.buf.slice(end + 4 + length);
    return { status, body: text };
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
    const head =
      `POST ${path} HTTP/1.1\r\nhost: binding.internal\r\ncontent-type: application/json\r\n` +
      `${SECRET_HEADER}: ${this.secret}\r\n` +
      // the API request id is printable ASCII (the host's server made or checked it); anything else is left out
      (requestId && /^[\x21-\x7e]{1,200}$/.test(requestId) ? `x-request-id: ${requestId}\r\n` : '') +
      `content-length: ${bytes.length}\r\n\r\n`;
    const reused = this.idle.pop();
    try {
      if (reused) return await this.send(reused, head, bytes);
    } catch (e) {
      if (!(e instanceof StaleConnection)) throw e;
    }
    return this.send(new BindingConn(await Deno.connect({ transport: 'unix', path: this.path })), head, bytes);
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
