/**
 * The Deno entry (built by build.mjs into dist/deno.mjs; no node: imports). The host spawns
 * `deno run` on it with least permissions (runtime/isolate/deno.ts) and writes ONE line of JSON on
 * its stdin: the binding socket, the per-start secret, the Unix socket to serve on and VARS. It
 * serves dist/app.mjs with Deno.serve; SYSTEM, DB and EVENTS are Fetchers that reach the host's
 * binding socket (docs/bindings-protocol.md). When stdin closes (the host is gone) it exits.
 */

interface DenoHttpClient {
  close(): void;
}
interface DenoApi {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writeSync(p: Uint8Array): number };
  createHttpClient(o: { proxy: { transport: 'unix'; path: string } }): DenoHttpClient;
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
  listen: string;
  vars: unknown;
}
interface AppModule {
  default: { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> };
}

const SECRET_HEADER = 'x-ballast-binding-secret';

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
  const client = Deno.createHttpClient({ proxy: { transport: 'unix', path: init.bindingSocket } });
  const secret = init.secret;
  // One Fetcher for the three bindings: the path (/system/…, /db/…, /events/send) names the op.
  const binding = {
    async fetch(input: Request | string, reqInit?: RequestInit): Promise<Response> {
      if (typeof input === 'string') {
        const headers = new Headers(reqInit?.headers);
        headers.set(SECRET_HEADER, secret);
        return fetch(input, { ...reqInit, headers, client } as RequestInit);
      }
      const headers = new Headers(input.headers);
      headers.set(SECRET_HEADER, secret);
      const body = input.method === 'GET' || input.method === 'HEAD' ? undefined : await input.arrayBuffer();
      return fetch(input.url, { method: input.method, headers, body, client } as RequestInit);
    },
  };
  const env = { SYSTEM: binding, DB_FETCH: binding, EVENTS_FETCH: binding, VARS: init.vars };
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
