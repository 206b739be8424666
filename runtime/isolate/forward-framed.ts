import net from 'node:net';
import type { Call, Reply } from '../../handlers/core/pipeline';
import { answers } from '../http/reply-batch';
import type { BindingAnswer } from '../../handlers/core/bindings';
import { refusal } from '../bindings/socket';
import {
  fetchOver,
  headersIn,
  isEventStream,
  outgoing,
  replyBody,
  StreamedPieces,
  type Forwarder,
  type HopOptions,
} from './forward';
import {
  hopControlOf,
  hopRequestHeadOf,
  hopResultHeadOf,
  MAX_HOP_HEAD,
  nextHopId,
  parseHopIsolateFrame,
  parseHopPreface,
  type HopAnswerHead,
  type HopCallHead,
  type HopChunkHead,
  type HopControlVerb,
} from './hop-frames';

/** The binding calls the isolate makes on the hop connection, served as the binding socket serves them. */
export interface HopCalls {
  /** is this the per-start binding secret, which the isolate's preface must carry (the binding socket's check) */
  authorised(given: string): boolean;
  /** one operation (the binding socket's: an unknown op is 404, a failure 500); never rejects */
  answer(op: string, body: string, requestId: string | undefined): Promise<BindingAnswer>;
  /** the largest JSON text a call may carry (larger: 413, and its bytes are skipped) */
  limit: number;
}

/** Bytes of a call over the limit, read past without keeping them. */
interface Skip {
  kind: 'skip';
  left: number;
}

const NEWLINE = 10;
/**
 * Frames that go out at once rather than at the end of the turn: Deno starts on a turn's first
 * requests while the host reads the rest. A/B on the bench's load in Deno mode, 4 alternating
 * rounds each (req/s summed): every 4 frames DB route +5%, SYSTEM-hop +7%; every 8: +14%, +3%;
 * every 16: +7%, +7%; p99 no worse.
 */
export const HOP_FLUSH_FRAMES = 8;
const EMPTY: Buffer = Buffer.alloc(0);

/** An exchange in flight, and where its answer's parts go. */
interface Exchange {
  call: Call;
  resolve(reply: Reply): void;
  reject(e: Error): void;
  status?: number;
  headers?: Record<string, string>;
  /** set once an event stream's head arrived: its pieces go here */
  streamed?: StreamedPieces;
  /** the isolate holds the stream's pieces back (a `pause` went out) */
  paused?: boolean;
  /** an answer in chunks that is not an event stream: collected, and the reply made at its end */
  collected?: Buffer[];
}

/**
 * The one connection to the Deno entry's framed hop (hop-frames.ts): every exchange in flight
 * shares it, each frame naming its exchange. The requests, control frames and call results of
 * an event-loop turn go out together, at its end or every HOP_FLUSH_FRAMES frames, so a turn's
 * requests cost the host a write or a few and the entry as many reads, where a connection per
 * exchange cost a write and a read each.
 */
class HopConnection {
  readonly socket: net.Socket;
  private buf: Buffer = EMPTY;
  private readonly exchanges = new Map<number, Exchange>();
  /** streams the host stopped (their client went away): what still comes for them is dropped */
  private readonly cancelled = new Set<number>();
  /** the frame being read after its head: an answer's headers and body, a chunk's or a call's bytes */
  private reading: HopAnswerHead | HopChunkHead | HopCallHead | Skip | undefined;
  /** a frame's bytes read so far while more are missing (joined once, when it is whole) */
  private parts: Buffer[] = [];
  /** how many bytes the frame being read still lacks beyond `parts` (0: none is waited for) */
  private missing = 0;
  /** the isolate's preface (the binding secret) came: the first line it sends */
  private greeted = false;
  /** frames waiting for the turn's end, or for HOP_FLUSH_FRAMES of them (a flush is scheduled while there are some) */
  private out: string[] = [];
  /** the connection cannot carry another exchange (closed, or the isolate broke the framing) */
  broken = false;

  constructor(
    path: string,
    private readonly calls: HopCalls,
  ) {
    this.socket = net.connect(path);
    this.socket.on('data', (chunk: Buffer) => {
      // the answers read now go to their clients with the turn's other answers (reply-batch.ts)
      answers.arrive();
      if (this.missing > 0) {
        // the rest of a large frame: its pieces are joined once it is whole, not at every read
        this.parts.push(chunk);
        this.missing -= chunk.length;
        if (this.missing > 0) return;
        this.buf = Buffer.concat(this.parts);
        this.parts = [];
        this.missing = 0;
      } else this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      this.pump();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => this.failAll('the isolate closed the connection before its answer was complete'));
  }

  /** An id no exchange in flight has, counting on from `after`. */
  freeId(after: number): number {
    return nextHopId(after, (id) => this.exchanges.has(id) || this.cancelled.has(id));
  }

  send(id: number, x: Exchange, frame: string): void {
    this.exchanges.set(id, x);
    this.queue(frame);
  }

  private control(id: number, verb: HopControlVerb): void {
    if (!this.broken) this.queue(hopControlOf(id, verb));
  }

  private queue(text: string): void {
    const n = this.out.push(text);
    if (n === 1) setImmediate(this.flush);
    else if (n >= HOP_FLUSH_FRAMES) this.flush();
  }

  private readonly flush = (): void => {
    if (this.out.length === 0) return;
    const text = this.out.length === 1 ? this.out[0] : this.out.join('');
    this.out = [];
    if (!this.broken) this.socket.write(text);
  };

  /** Every exchange in flight fails (the connection is gone or no longer trusted). */
  private failAll(why: string): void {
    this.broken = true;
    const e = new Error(why);
    for (const x of this.exchanges.values()) {
      if (x.streamed) x.streamed.fail(e);
      else x.reject(e);
    }
    this.exchanges.clear();
  }

  /** A fault in the answers' framing: the connection is dropped, its exchanges fail. */
  private fault(why: string): void {
    this.failAll(`the isolate's answer: ${why}`);
    this.socket.destroy();
  }

  private pump(): void {
    while (!this.broken) {
      const r = this.reading;
      if (!r) {
        const nl = this.buf.indexOf(NEWLINE);
        if (nl < 0) {
          if (this.buf.length > MAX_HOP_HEAD) this.fault('a head line too long');
          return;
        }
        const line = this.buf.toString('latin1', 0, nl);
        this.buf = this.buf.subarray(nl + 1);
        if (!this.greeted) {
          if (!this.secretIn(line)) return this.fault('no preface with the binding secret');
          this.greeted = true;
          continue;
        }
        const f = parseHopIsolateFrame(line);
        if (!f) return this.fault(`not a frame head: ${JSON.stringify(line.slice(0, 80))}`);
        if (f.kind === 'call') {
          if (f.length > this.calls.limit) {
            this.result(f.id, 413, refusal('payload_too_large', `binding payload exceeds ${this.calls.limit} bytes`));
            this.reading = { kind: 'skip', left: f.length };
          } else this.reading = f;
          continue;
        }
        if (!this.exchanges.has(f.id) && !this.cancelled.has(f.id))
          return this.fault(`a frame for no request (${f.id})`);
        if (f.kind === 'chunk' && f.length === 0) this.end(f.id);
        else this.reading = f;
        continue;
      }
      if (r.kind === 'skip') {
        const n = Math.min(r.left, this.buf.length);
        this.buf = this.buf.subarray(n);
        r.left -= n;
        if (r.left > 0) return;
        this.reading = undefined;
        continue;
      }
      const need = r.kind === 'answer' ? r.headersLength + (r.bodyLength ?? 0) : r.length;
      if (this.buf.length < need) {
        this.parts = [this.buf];
        this.missing = need - this.buf.length;
        this.buf = EMPTY;
        return;
      }
      const bytes = this.buf.subarray(0, need);
      this.buf = this.buf.subarray(need);
      this.reading = undefined;
      if (r.kind === 'answer') this.answer(r, bytes);
      else if (r.kind === 'call') this.call(r, bytes);
      else this.chunk(r.id, bytes);
    }
  }

  private secretIn(line: string): boolean {
    const given = parseHopPreface(line);
    return given !== null && this.calls.authorised(given);
  }

  /** A binding call: run as the binding socket runs it; its result goes out with the turn's frames. */
  private call(head: HopCallHead, bytes: Buffer): void {
    void this.calls
      .answer(head.op, bytes.toString('utf8'), head.requestId)
      .then((a) => this.result(head.id, a.status, a.body));
  }

  private result(id: number, status: number, body: string): void {
    if (!this.broken) this.queue(hopResultHeadOf(id, status, Buffer.byteLength(body)) + body);
  }

  private answer(head: HopAnswerHead, bytes: Buffer): void {
    const x = this.exchanges.get(head.id);
    if (!x) return; // a stream the host stopped
    if (x.status !== undefined) return this.fault(`a second answer to request ${head.id}`);
    let headers: Record<string, string>;
    try {
      headers = headersIn(JSON.parse(bytes.toString('utf8', 0, head.headersLength)) as Record<string, string>);
    } catch {
      return this.fault('headers that are not JSON');
    }
    const { status } = head;
    if (head.bodyLength !== null) {
      this.exchanges.delete(head.id);
      x.resolve({ status, headers, body: replyBody(x.call.method, status, [bytes.subarray(head.headersLength)]) });
      return;
    }
    x.status = status;
    x.headers = headers;
    // an event stream (a job's events) is passed on as it comes; any other answer in chunks
    // (a long listing) is one body, as the HTTP hop's client collects it
    if (!isEventStream(x.call.method, status, headers)) {
      x.collected = [];
      return;
    }
    const id = head.id;
    x.streamed = new StreamedPieces({
      pause: () => {
        x.paused = true;
        this.control(id, 'pause');
      },
      resume: () => {
        x.paused = false;
        this.control(id, 'resume');
      },
      get paused() {
        return x.paused === true;
      },
      // the client went away: the isolate stops the app's stream
      abort: () => {
        if (this.exchanges.delete(id)) this.cancelled.add(id);
        this.control(id, 'cancel');
      },
    });
    x.resolve({ status, headers, body: null, chunks: x.streamed.pieces() });
  }

  private chunk(id: number, bytes: Buffer): void {
    const x = this.exchanges.get(id);
    if (!x) return; // a stream the host stopped
    if (x.collected) x.collected.push(bytes);
    else if (x.streamed) x.streamed.push(bytes);
    else this.fault(`a chunk before its answer's head (${id})`);
  }

  private end(id: number): void {
    this.cancelled.delete(id);
    const x = this.exchanges.get(id);
    if (!x) return;
    this.exchanges.delete(id);
    if (x.collected)
      x.resolve({ status: x.status!, headers: x.headers!, body: replyBody(x.call.method, x.status!, x.collected) });
    else if (x.streamed) x.streamed.end();
    else this.fault(`the end of an answer that has no head (${id})`);
  }
}

/**
 * The framed hop's client (Deno): each call is a frame on the one connection to the entry (a new
 * one once it is gone), its answer read into a Reply. No timeouts of its own (forward.ts).
 */
export function framedForwarder(socketPath: string, hop: HopOptions, calls: HopCalls): Forwarder {
  let conn: HopConnection | undefined;
  let lastId = 0;
  let closed = false;

  const handle = async (call: Call): Promise<Reply> => {
    if (closed) throw new Error('the hop to the isolate is closed');
    const out = outgoing(call, hop);
    const headers = JSON.stringify(out.headers);
    if (!conn || conn.broken) conn = new HopConnection(socketPath, calls);
    const c = conn;
    const id = (lastId = c.freeId(lastId));
    const frame =
      hopRequestHeadOf(
        id,
        call.method,
        call.url.pathname + call.url.search,
        Buffer.byteLength(headers),
        out.bodyLength,
      ) +
      headers +
      (out.body ?? '');
    return new Promise<Reply>((resolve, reject) => c.send(id, { call, resolve, reject }, frame));
  };

  return {
    handle,
    fetch: fetchOver(handle, hop),
    close() {
      closed = true;
      conn?.socket.destroy();
    },
  };
}
