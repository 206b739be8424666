/**
 * The Deno entry's side of the framed hop (hop-frames.ts; docs/bindings-protocol.md "The framed
 * hop"): each request on the host's connection becomes the Call the app's fetch would have made
 * of the Request Deno.serve would have made, the app's handle answers it, and the Reply goes back
 * as one frame, or in chunks while its pieces come (an event stream, a long listing). Every
 * request in flight shares the connection; each frame names its exchange.
 */
import { callFromParts, iteratorOf, type Call, type Reply } from '../../handlers/core/pipeline';
import type { BindingAnswer, BindingPost } from '../../handlers/core/bindings';
import { ConnReader, joined, Outbox, type DenoConn } from './deno-conn';
import {
  hopAnswerHeadOf,
  hopCallHeadOf,
  hopChunkHeadOf,
  hopPrefaceOf,
  MAX_HOP_HEAD,
  nextHopId,
  parseHopHostFrame,
  STREAMED,
  type HopRequestHead,
} from './hop-frames';

const enc = new TextEncoder();
const dec = new TextDecoder();
const GONE = Symbol('the host went away');

/** The app's two doors (dist/app.mjs): a Call straight in, or a WHATWG Request. */
export interface HopDoors {
  handle(call: Call): Promise<Reply>;
  fetch(request: Request): Promise<Response>;
}

/** The app as a connection serves it: its doors for that connection's binding calls. */
export interface HopApp {
  /** the doors whose binding calls go out by `post` (once per connection) */
  open(post: BindingPost): HopDoors;
  maxBodyBytes: number;
  /** the per-start binding secret, the connection's preface */
  secret: string;
}

/** A binding call waiting for its result. */
interface Pending {
  resolve(a: BindingAnswer): void;
  reject(e: Error): void;
}

/** A connection's binding calls: sent with `post`, settled by their results, failed together. */
interface BindingCalls {
  post: BindingPost;
  /** The result of call `id`; false when no call waits for it. */
  settle(id: number, answer: BindingAnswer): boolean;
  /** Every call waiting, and every later one, fails with `e`. */
  fail(e: Error): void;
}

/**
 * The connection's binding calls (hop-frames.ts hopCallHeadOf): each goes out as a frame with an
 * id of its own, and its result comes back on the connection by that id.
 */
function bindingCalls(out: Outbox): BindingCalls {
  const pending = new Map<number, Pending>();
  let last = 0;
  let failed: Error | undefined;
  return {
    post: (path, body, requestId) => {
      if (failed) return Promise.reject(failed);
      const bytes = enc.encode(body);
      const id = (last = nextHopId(last, (n) => pending.has(n)));
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        out.send(joined(enc.encode(hopCallHeadOf(id, path, requestId, bytes.length)), bytes));
      });
    },
    settle: (id, answer) => {
      const p = pending.get(id);
      if (!p) return false;
      pending.delete(id);
      p.resolve(answer);
      return true;
    },
    fail: (e) => {
      failed = e;
      for (const p of pending.values()) p.reject(e);
    },
  };
}

/**
 * The Call the app's fetch would have made of the Request Deno.serve made of this request (the
 * URL from the host header, a body exactly when the host sent its length), made directly: a
 * WHATWG Request costs Deno ~30 µs to build, more than the rest of the hop.
 */
function callOf(
  head: HopRequestHead,
  given: Record<string, string | string[]>,
  body: Uint8Array,
  maxBody: number,
): Call {
  const one = (v: string | string[]) => (Array.isArray(v) ? v.join(', ') : v);
  const header = (name: string) => {
    const v = given[name.toLowerCase()];
    return v === undefined ? null : one(v);
  };
  const pairs = () =>
    Object.keys(given)
      .sort()
      .map((k) => [k, one(given[k])] as const);
  const url = new URL(`http://${header('host') ?? 'isolate.internal'}${head.target}`);
  // callFromParts leaves out the body of a GET, HEAD or OPTIONS, as callFromRequest does
  return callFromParts(head.method, url, header, pairs, given['content-length'] !== undefined ? body : null, maxBody);
}

/** The request as Deno.serve gives it, for the app's fetch (a call the app's limits refuse). */
function requestOf(
  head: HopRequestHead,
  given: Record<string, string | string[]>,
  body: Uint8Array<ArrayBuffer>,
): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(given))
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  const hasBody = head.method !== 'GET' && head.method !== 'HEAD' && headers.has('content-length');
  return new Request(`http://${headers.get('host') ?? 'isolate.internal'}${head.target}`, {
    method: head.method,
    headers,
    body: hasBody ? body : null,
  });
}

/**
 * A reply's headers as a Response would carry them to Deno.serve: names in lower case and in
 * order, and a text body without a content type is text/plain.
 */
function headersOf(reply: Reply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(reply.headers)) {
    const name = k.toLowerCase();
    out[name] = name in out ? `${out[name]}, ${reply.headers[k]}` : reply.headers[k];
  }
  if (typeof reply.body === 'string' && !reply.chunks && out['content-type'] === undefined)
    out['content-type'] = 'text/plain;charset=UTF-8';
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(out).sort()) sorted[k] = out[k];
  return sorted;
}

/** A Response's headers as they go back (when the app's fetch answered). */
function responseHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    out[k] = k in out ? `${out[k]}, ${v}` : v;
  });
  return out;
}

/** An answer in pieces under way: what the host asked of it (control frames). */
interface StreamState {
  paused: boolean;
  /** resolves the wait of a paused stream (a resume or a cancel came) */
  wake?: () => void;
  /** resolves when the host cancels the stream or the connection ends */
  stopped: Promise<typeof GONE>;
  stop(): void;
}

function streamState(): StreamState {
  let stop = () => undefined as void;
  const stopped = new Promise<typeof GONE>((resolve) => (stop = () => resolve(GONE)));
  const s: StreamState = {
    paused: false,
    stopped,
    stop: () => {
      s.paused = false;
      stop();
      s.wake?.();
    },
  };
  return s;
}

/**
 * A body that comes in pieces (an event stream, a long listing), as the app produces them, until
 * it ends or the host stops it (a cancel, or the connection ended: the app's pieces are stopped,
 * as Deno.serve cancels a response body when its client leaves). Always ends with the empty chunk,
 * so the host knows the id is free.
 */
async function streamBody(
  id: number,
  out: Outbox,
  state: StreamState,
  pieces: AsyncIterator<Uint8Array | string> | Iterator<Uint8Array | string>,
): Promise<void> {
  try {
    for (;;) {
      while (state.paused) await new Promise<void>((resolve) => (state.wake = resolve));
      const next = await Promise.race([pieces.next(), state.stopped]);
      if (next === GONE) {
        await pieces.return?.();
        break;
      }
      if (next.done) break;
      const bytes = typeof next.value === 'string' ? enc.encode(next.value) : next.value;
      if (bytes.length) {
        out.send(joined(enc.encode(hopChunkHeadOf(id, bytes.length)), bytes));
        await out.room();
      }
    }
  } catch (e) {
    // the app's pieces failed: the host sees the answer end early, its client a cut body
    console.error(`ballast deno entry: stream ${id}: ${e instanceof Error ? e.message : String(e)}`);
    await Promise.resolve(pieces.return?.()).catch(() => undefined);
  }
  out.send(enc.encode(hopChunkHeadOf(id, 0)));
}

/** One request: the app's answer, written as one frame or as a head and chunks. */
async function answerOne(
  head: HopRequestHead,
  given: Record<string, string | string[]>,
  body: Uint8Array<ArrayBuffer>,
  app: HopDoors,
  maxBodyBytes: number,
  out: Outbox,
  streams: Map<number, StreamState>,
): Promise<void> {
  let call: Call | undefined;
  try {
    call = callOf(head, given, body, maxBodyBytes);
  } catch {
    // refused before the app saw it (a body over the limit): the app's fetch answers that
  }
  let headers: Record<string, string>;
  let bytes: Uint8Array | null = null;
  let pieces: AsyncIterator<Uint8Array | string> | Iterator<Uint8Array | string> | null = null;
  let status: number;
  try {
    if (call) {
      const reply = await app.handle(call);
      status = reply.status;
      headers = headersOf(reply);
      if (reply.chunks) pieces = iteratorOf(reply.chunks);
      else bytes = typeof reply.body === 'string' ? enc.encode(reply.body) : reply.body;
    } else {
      const res = await app.fetch(requestOf(head, given, body));
      status = res.status;
      headers = responseHeaders(res);
      bytes = new Uint8Array(await res.arrayBuffer());
    }
  } catch (e) {
    // what Deno.serve answers when its handler throws (the app's own errors are answers)
    console.error(`ballast deno entry: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    status = 500;
    headers = { 'content-type': 'text/plain;charset=UTF-8' };
    bytes = enc.encode('Internal Server Error');
    pieces = null;
  }
  const h = enc.encode(JSON.stringify(headers));
  if (head.method === 'HEAD') bytes = null;
  if (!pieces || head.method === 'HEAD') {
    const b = bytes ?? new Uint8Array(0);
    out.send(joined(enc.encode(hopAnswerHeadOf(head.id, status, h.length, b.length)), h, b));
    return;
  }
  const state = streamState();
  streams.set(head.id, state);
  out.send(joined(enc.encode(hopAnswerHeadOf(head.id, status, h.length, STREAMED)), h));
  try {
    await streamBody(head.id, out, state, pieces);
  } finally {
    streams.delete(head.id);
  }
}

/**
 * Serves the host's connection until it ends (or breaks the framing: then it is closed). Each
 * request is answered as soon as the app has its answer, whatever came before it; a control frame
 * pauses, resumes or stops an answer in pieces.
 */
export async function serveHopConnection(conn: DenoConn, app: HopApp): Promise<void> {
  const reader = new ConnReader(conn);
  const out = new Outbox(conn);
  const streams = new Map<number, StreamState>();
  const calls = bindingCalls(out);
  const doors = app.open(calls.post);
  out.send(enc.encode(hopPrefaceOf(app.secret)));
  try {
    for (;;) {
      const line = await reader.line(MAX_HOP_HEAD);
      if (line === null) return;
      const f = parseHopHostFrame(line);
      if (!f) throw new Error(`not a hop frame: ${JSON.stringify(line.slice(0, 80))}`);
      if (f.kind === 'result') {
        const body = dec.decode(await reader.take(f.length));
        if (!calls.settle(f.id, { status: f.status, body })) throw new Error(`a result for no call (${f.id})`);
        continue;
      }
      if (f.kind === 'control') {
        const s = streams.get(f.id);
        if (!s) continue; // its answer has ended meanwhile
        if (f.verb === 'cancel') s.stop();
        else {
          s.paused = f.verb === 'pause';
          if (!s.paused) s.wake?.();
        }
        continue;
      }
      const given = JSON.parse(dec.decode(await reader.take(f.headersLength))) as Record<string, string | string[]>;
      const body = await reader.take(f.bodyLength);
      void answerOne(f, given, body, doors, app.maxBodyBytes, out, streams);
    }
  } catch (e) {
    console.error(`ballast deno entry: hop connection: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    // the calls under way cannot get their results: their requests' answers have nowhere to go
    calls.fail(new Error('the host closed the hop connection'));
    // the host is gone: the answers in pieces stop
    for (const s of streams.values()) s.stop();
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}
