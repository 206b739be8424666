import net from 'node:net';
import type { Call, Reply } from '../../handlers/core/pipeline';
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
import { answers } from '../http/reply-batch';
import { hopRequestHeadOf, MAX_HOP_HEAD, parseHopAnswerHead, parseHopChunkHead } from './hop-frames';

/** Connections to the isolate at most, as undici's Pool is given for the HTTP hop. */
const MAX_CONNECTIONS = 64;
const NEWLINE = 10;
const EMPTY: Buffer = Buffer.alloc(0);

/** The answer a connection is reading, and where its parts go. */
interface Exchange {
  call: Call;
  resolve(reply: Reply): void;
  reject(e: Error): void;
  /** set once an event stream's head arrived: its pieces go here */
  streamed?: StreamedPieces;
  /** an answer in chunks that is not an event stream: collected, and the reply made at its end */
  collected?: Buffer[];
}

/**
 * One connection to the Deno entry's framed hop (hop-frames.ts): a request is written as one
 * frame; the answer is read as it arrives: head, headers, body or chunks. One exchange at a time.
 */
class HopConnection {
  readonly socket: net.Socket;
  private buf: Buffer = EMPTY;
  private exchange: Exchange | undefined;
  /** what the reader waits for: a head line, or `need` bytes of the answer's headers, body or chunk */
  private stage: 'head' | 'headers' | 'body' | 'chunk-head' | 'chunk' = 'head';
  private need = 0;
  private status = 0;
  private headers: Record<string, string> = {};
  private bodyLength: number | null = null;
  /** the connection cannot carry another exchange (closed, or left in the middle of an answer) */
  broken = false;

  constructor(
    path: string,
    private readonly done: (c: HopConnection) => void,
  ) {
    this.socket = net.connect(path);
    this.socket.on('data', (chunk: Buffer) => {
      // the answers read now go to their clients with the turn's other answers (reply-batch.ts)
      answers.arrive();
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      this.pump();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.broken = true;
      const e = new Error('the isolate closed the connection before its answer was complete');
      const x = this.exchange;
      this.exchange = undefined;
      if (x?.streamed) x.streamed.fail(e);
      else x?.reject(e);
    });
  }

  send(x: Exchange, frame: string): void {
    this.exchange = x;
    this.stage = 'head';
    this.socket.write(frame);
  }

  /** A fault in the answer's framing: the connection is dropped, the exchange fails. */
  private fault(why: string): void {
    const x = this.exchange;
    this.exchange = undefined;
    this.broken = true;
    this.socket.destroy();
    const e = new Error(`the isolate's answer: ${why}`);
    if (x?.streamed) x.streamed.fail(e);
    else x?.reject(e);
  }

  private take(): Buffer | null {
    if (this.buf.length < this.need) return null;
    const out = this.buf.subarray(0, this.need);
    this.buf = this.buf.subarray(this.need);
    return out;
  }

  private line(): string | null {
    const nl = this.buf.indexOf(NEWLINE);
    if (nl < 0) {
      if (this.buf.length > MAX_HOP_HEAD) this.fault('a head line too long');
      return null;
    }
    const text = this.buf.toString('latin1', 0, nl);
    this.buf = this.buf.subarray(nl + 1);
    return text;
  }

  private finish(): void {
    this.exchange = undefined;
    this.done(this);
  }

  private pump(): void {
    for (;;) {
      const x = this.exchange;
      if (!x) {
        // nothing asked: bytes now are a fault of the isolate's
        if (this.buf.length) this.fault('bytes outside an answer');
        return;
      }
      if (this.stage === 'head' || this.stage === 'chunk-head') {
        const text = this.line();
        if (text === null) return;
        if (this.stage === 'chunk-head') {
          const n = parseHopChunkHead(text);
          if (n === null) return this.fault(`not a chunk head: ${JSON.stringify(text.slice(0, 80))}`);
          if (n === 0) {
            if (x.collected)
              x.resolve({
                status: this.status,
                headers: this.headers,
                body: replyBody(x.call.method, this.status, x.collected),
              });
            else x.streamed?.end();
            this.finish();
            continue;
          }
          this.need = n;
          this.stage = 'chunk';
          continue;
        }
        const head = parseHopAnswerHead(text);
        if (!head) return this.fault(`not an answer head: ${JSON.stringify(text.slice(0, 80))}`);
        this.status = head.status;
        this.bodyLength = head.bodyLength;
        this.need = head.headersLength;
        this.stage = 'headers';
        continue;
      }
      const bytes = this.take();
      if (bytes === null) return;
      if (this.stage === 'headers') {
        try {
          this.headers = headersIn(JSON.parse(bytes.toString('utf8')) as Record<string, string>);
        } catch {
          return this.fault('headers that are not JSON');
        }
        if (this.bodyLength !== null) {
          this.need = this.bodyLength;
          this.stage = 'body';
          continue;
        }
        this.stage = 'chunk-head';
        // an event stream (a job's events) is passed on as it comes; any other answer in chunks
        // (a long listing) is one body, as the HTTP hop's client collects it
        if (!isEventStream(x.call.method, this.status, this.headers)) {
          x.collected = [];
          continue;
        }
        const socket = this.socket;
        x.streamed = new StreamedPieces({
          pause: () => socket.pause(),
          resume: () => socket.resume(),
          get paused() {
            return socket.isPaused();
          },
          // the client went away: the isolate sees its stream's connection end
          abort: () => {
            this.broken = true;
            this.socket.destroy();
          },
        });
        x.resolve({ status: this.status, headers: this.headers, body: null, chunks: x.streamed.pieces() });
        continue;
      }
      if (this.stage === 'chunk') {
        if (x.collected) x.collected.push(bytes);
        else x.streamed?.push(bytes);
        this.stage = 'chunk-head';
        continue;
      }
      // the whole body
      x.resolve({ status: this.status, headers: this.headers, body: replyBody(x.call.method, this.status, [bytes]) });
      this.finish();
    }
  }
}

/**
 * The framed hop's client (Deno): a call is written as one frame on a connection of its own for
 * as long as it runs, and its answer read into a Reply. Up to MAX_CONNECTIONS connections, kept
 * between calls; a call beyond them waits for one. No timeouts of its own (forward.ts).
 */
export function framedForwarder(socketPath: string, hop: HopOptions): Forwarder {
  const idle: HopConnection[] = [];
  const waiting: ((c: HopConnection) => void)[] = [];
  const all = new Set<HopConnection>();
  let closed = false;

  const open = (): HopConnection => {
    const c = new HopConnection(socketPath, release);
    all.add(c);
    c.socket.once('close', () => {
      all.delete(c);
      const at = idle.indexOf(c);
      if (at >= 0) idle.splice(at, 1);
      // its place is free: a call that waited for one gets a new connection
      const next = waiting.shift();
      if (next && !closed) next(open());
    });
    return c;
  };
  /** A connection whose exchange ended: the next waiting call's, or idle. A broken one just closes. */
  function release(c: HopConnection): void {
    if (c.broken) return;
    const next = waiting.shift();
    if (next) next(c);
    else idle.push(c);
  }
  const acquire = (): Promise<HopConnection> => {
    const c = idle.pop();
    if (c) return Promise.resolve(c);
    if (all.size < MAX_CONNECTIONS) return Promise.resolve(open());
    return new Promise((resolve) => waiting.push(resolve));
  };

  const handle = async (call: Call): Promise<Reply> => {
    if (closed) throw new Error('the hop to the isolate is closed');
    const out = outgoing(call, hop);
    const headers = JSON.stringify(out.headers);
    const frame =
      hopRequestHeadOf(call.method, call.url.pathname + call.url.search, Buffer.byteLength(headers), out.bodyLength) +
      headers +
      (out.body ?? '');
    const c = await acquire();
    // a failed exchange has already marked its connection broken: it is not released, it closes
    return new Promise<Reply>((resolve, reject) => c.send({ call, resolve, reject }, frame));
  };

  return {
    handle,
    fetch: fetchOver(handle, hop),
    close() {
      closed = true;
      for (const c of all) c.socket.destroy();
    },
  };
}
