/**
 * The Deno entry (built by build.mjs into dist/deno.mjs; no node: imports). The host spawns
 * `deno run` on it with least permissions (runtime/isolate/deno.ts) and writes ONE line of JSON on
 * its stdin: the per-start secrets (binding, hop), the Unix socket to serve on and VARS. It serves
 * dist/app.mjs on that socket to the host's framed hop (deno-hop.ts; the host is its only client,
 * so it need not be HTTP). SYSTEM, DB and EVENTS are Fetchers whose calls go back on the hop
 * connection the request came in on (docs/bindings-protocol.md "Binding calls on the hop"): the
 * process has no permission for the host's binding socket. When stdin closes (the host is gone)
 * it exits.
 */
import type { DenoConn } from './deno-conn';
import { serveHopConnection, type HopApp } from './deno-hop';
import type { BindingPost } from '../../handlers/core/bindings';
import { DEFAULT_MAX_BODY_BYTES, type Call, type Reply } from '../../handlers/core/pipeline';
interface DenoApi {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writeSync(p: Uint8Array): number };
  listen(o: { transport: 'unix'; path: string }): AsyncIterable<DenoConn>;
  exit(code: number): never;
}
declare const Deno: DenoApi;

interface Init {
  secret: string;
  hopSecret: string;
  listen: string;
  vars: unknown;
}
interface AppModule {
  default: { fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> };
  handle(call: Call, env: unknown, ctx: unknown): Promise<Reply>;
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
  const ctx = {
    waitUntil(p: Promise<unknown>) {
      p.catch(() => undefined);
    },
  };
  const vars = init.vars;
  const hopSecret = init.hopSecret;
  /** The bindings of one hop connection: every call goes back on it (deno-hop.ts). */
  const envOf = (post: BindingPost) => {
    // One Fetcher for the three bindings: the path (/system/…, /db/…, /events/send) names the op.
    const binding = {
      async fetch(input: Request | string, reqInit?: RequestInit): Promise<Response> {
        const request = typeof input === 'string' ? undefined : input;
        const url = new URL(typeof input === 'string' ? input : input.url);
        const headers = new Headers(reqInit?.headers ?? request?.headers);
        const body = typeof reqInit?.body === 'string' ? reqInit.body : request ? await request.text() : '';
        const a = await post(url.pathname, body, headers.get('x-request-id') ?? undefined);
        return new Response(a.body, { status: a.status, headers: { 'content-type': 'application/json' } });
      },
    };
    return {
      SYSTEM: binding,
      DB_FETCH: binding,
      EVENTS_FETCH: binding,
      // what the routes' binding calls use here (handlers/core/bindings.ts BindingPost): the same
      // operation as the Fetchers', without building a Request and a Response around each
      BINDING_POST: post,
      HOP_SECRET: hopSecret,
      VARS: vars,
    };
  };
  // the host's requests arrive framed (deno-hop.ts), not as HTTP, all on one connection
  const listener = Deno.listen({ transport: 'unix', path: init.listen });
  Deno.stdout.writeSync(new TextEncoder().encode('ready\n'));
  void (async () => {
    const hopApp: HopApp = {
      open: (post) => {
        const env = envOf(post);
        return {
          handle: (call: Call) => app.handle(call, env, ctx),
          fetch: (request: Request) => app.default.fetch(request, env, ctx),
        };
      },
      // the limit the app's fetch applies (app.ts fetchVia)
      maxBodyBytes: Number(
        (init.vars as { settings?: { maxBodyBytes?: number } } | null)?.settings?.maxBodyBytes ??
          DEFAULT_MAX_BODY_BYTES,
      ),
      secret: init.secret,
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
