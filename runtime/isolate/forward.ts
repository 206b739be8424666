import http from 'node:http';
import { Readable } from 'node:stream';

/** Where an isolate listens: a Unix socket (Deno) or a loopback address (workerd). */
export type IsolateAddress = { socketPath: string } | { host: string; port: number };

/** Connection-level headers this hop owns; the host's server sets its own framing. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

/**
 * Forwards the host's WHATWG Request to the isolate's HTTP server over keep-alive connections
 * and reads the answer back. The host stays the public listener (TLS, access log, limits).
 */
export function forwarder(address: IsolateAddress): {
  fetch(request: Request): Promise<Response>;
  close(): void;
} {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return {
    async fetch(request: Request): Promise<Response> {
      const u = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((v, k) => {
        // accept-encoding stays behind: the host's server writes the answer as it is, so the
        // isolate must not compress it (Deno.serve and workerd would, for a gzip-accepting client)
        if (!HOP.has(k) && k !== 'accept-encoding') headers[k] = v;
      });
      headers.host = u.host;
      const body =
        request.method === 'GET' || request.method === 'HEAD' || request.body === null
          ? undefined
          : Buffer.from(await request.arrayBuffer());
      if (body) headers['content-length'] = String(body.length);
      return new Promise<Response>((resolve, reject) => {
        const req = http.request(
          { ...address, agent, method: request.method, path: u.pathname + u.search, headers },
          (res) => {
            // an event stream (a job's events) goes on while the job runs: its pieces are passed
            // on as they come, not collected to the end
            const status = res.statusCode ?? 502;
            if (
              status >= 200 &&
              status < 300 &&
              String(res.headers['content-type'] ?? '').startsWith('text/event-stream')
            ) {
              const h = new Headers();
              for (let i = 0; i < res.rawHeaders.length; i += 2) {
                const k = res.rawHeaders[i].toLowerCase();
                if (!HOP.has(k) && k !== 'date') h.append(k, res.rawHeaders[i + 1]);
              }
              const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
              resolve(
                new Response(request.method === 'HEAD' ? null : body, { status: res.statusCode ?? 502, headers: h }),
              );
              return;
            }
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', reject);
            res.on('end', () => {
              const h = new Headers();
              for (let i = 0; i < res.rawHeaders.length; i += 2) {
                const k = res.rawHeaders[i].toLowerCase();
                if (!HOP.has(k) && k !== 'date') h.append(k, res.rawHeaders[i + 1]);
              }
              const status = res.statusCode ?? 502;
              const nullBody = request.method === 'HEAD' || status === 204 || status === 304;
              resolve(new ForwardedResponse(status, h, nullBody ? null : Buffer.concat(chunks)));
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/**
 * The isolate's answer: a real Response (headers, status) whose body stays the Buffer read from
 * the socket. An undici Response built on the bytes and then read back through its stream costs
 * more than the rest of the hop; here text()/arrayBuffer()/json() read the Buffer, and the body
 * stream is made only if someone asks for it.
 */
class ForwardedResponse extends Response {
  readonly #bytes: Buffer | null;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | null | undefined;
  constructor(status: number, headers: Headers, bytes: Buffer | null) {
    super(null, { status, headers });
    this.#bytes = bytes;
  }
  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (this.#stream === undefined)
      this.#stream = this.#bytes ? new Blob([new Uint8Array(this.#bytes)]).stream() : null;
    return this.#stream;
  }
  override get bodyUsed(): boolean {
    return false;
  }
  override async text(): Promise<string> {
    return this.#bytes ? this.#bytes.toString('utf8') : '';
  }
  override async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.#bytes ?? Buffer.alloc(0);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }
  override async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
}
