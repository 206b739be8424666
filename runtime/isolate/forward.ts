import http from 'node:http';
import { tokenIdOf } from '../../handlers/core/auth';
import type { TokenLookup } from '../../handlers/core/bindings';
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

/** Where an isolate listens: a Unix socket (Deno, workerd). */
export type IsolateAddress = { socketPath: string } | { host: string; port: number };

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
  'accept-encoding',
  'expect',
  'x-request-id',
  CONNECTION_HEADER,
  HOP_SECRET_HEADER,
  TOKEN_ROW_HEADER,
]);

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
  if (id !== undefined && hop.tokens) out[TOKEN_ROW_HEADER] = encodeTokenRow(hop.tokens.token(id));
  return out;
}

async function* textPieces(res: http.IncomingMessage): AsyncGenerator<string> {
  res.setEncoding('utf8');
  try {
    for await (const piece of res) if (piece) yield piece as string;
  } finally {
    // the client went away: the isolate's stream is closed too
    res.destroy();
  }
}

/**
 * Forwards a Call to the isolate's HTTP server over keep-alive connections and reads its answer
 * into a Reply: no WHATWG Request or Response on the host's side of the hop. The host stays the
 * public listener (TLS, access log, limits); `fetch` is the same for a WHATWG caller (an
 * embedder's `Ballast.fetch`, the health probe).
 */
export function forwarder(
  address: IsolateAddress,
  hop: HopOptions,
): {
  handle(call: Call): Promise<Reply>;
  fetch(request: Request): Promise<Response>;
  close(): void;
} {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const handle = (call: Call): Promise<Reply> => {
    const headers = headersOut(call, hop);
    // GET bodies cannot travel to a WHATWG server: their fields go onto the query here, as the
    // in-process app does (pipeline.ts), so an isolate answers a GET body the same way
    mapGetBodyToQuery(call);
    const body =
      call.bodyText !== undefined && !BODYLESS.has(call.method) ? Buffer.from(call.bodyText, 'utf8') : undefined;
    if (body) headers['content-length'] = String(body.length);
    const head = call.method === 'HEAD';
    return new Promise<Reply>((resolve, reject) => {
      const req = http.request(
        { ...address, agent, method: call.method, path: call.url.pathname + call.url.search, headers },
        (res) => {
          const status = res.statusCode ?? 502;
          const out: Record<string, string> = {};
          const raw = res.rawHeaders;
          for (let i = 0; i < raw.length; i += 2) {
            const k = raw[i].toLowerCase();
            if (HOP.has(k) || k === 'date') continue;
            out[k] = out[k] === undefined ? raw[i + 1] : `${out[k]}, ${raw[i + 1]}`;
          }
          // an event stream (a job's events) goes on while the job runs: its pieces are passed
          // on as they come, not collected to the end
          if (!head && status >= 200 && status < 300 && out['content-type']?.startsWith('text/event-stream')) {
            resolve({ status, headers: out, body: null, chunks: textPieces(res) });
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const nullBody = head || status === 204 || status === 304;
            const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
            resolve({
              status,
              headers: out,
              body: nullBody ? null : new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length),
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  return {
    handle,
    async fetch(request: Request): Promise<Response> {
      const maxBody = Number(hop.vars?.settings?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      let call: Call;
      try {
        call = await callFromRequest(request, maxBody);
      } catch (e) {
        const requestId = crypto.randomUUID();
        return responseFromReply(errorReply(toApiError(e, requestId), hop.vars, requestId, request.method === 'HEAD'));
      }
      return responseFromReply(await handle(call));
    },
    close: () => agent.destroy(),
  };
}
