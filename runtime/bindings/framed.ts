import type net from 'node:net';
import { answerHeadOf, MAX_FRAME_HEAD, parseRequestHead } from './frames';

/** An operation's answer: the status and the JSON text (socket.ts answers unknown ops and failures). */
export type Answer = { status: number; body: string };

export interface FramedOptions {
  /** Is this the per-start binding secret (constant time)? */
  authorised(given: string): boolean;
  /** Runs one operation: its path, JSON text and request id. Never rejects. */
  answer(op: string, body: string, requestId: string | undefined): Promise<Answer>;
  /** The largest JSON text a request may carry (larger: 413, and the connection is closed). */
  limit: number;
  /** How long the connection may sit with no request in flight before it is closed. */
  idleTimeoutMs: number;
}

/** A refusal's JSON text, in the binding protocol's error shape (either framing). */
export const refusal = (code: string, message: string): string => JSON.stringify({ error: { code, message } });
const NEWLINE = 10;
const EMPTY = Buffer.alloc(0);

/**
 * Serves one framed connection (frames.ts; docs/bindings-protocol.md), given the bytes read so
 * far. The preface must carry the secret; then requests are answered one at a time, in order (a
 * request sent before the last answer waits). A connection that breaks the framing, gives a
 * wrong secret or an oversized payload gets one answer saying so and is closed: its next bytes
 * could not be trusted to start a request.
 */
export function serveFramed(socket: net.Socket, first: Buffer, o: FramedOptions): void {
  let buf = first;
  let authed = false;
  let busy = false;
  let closed = false;
  /** the request whose JSON text is still arriving, and the text's chunks so far */
  let awaiting: { op: string; requestId: string | undefined; length: number } | undefined;
  let parts: Buffer[] = [];
  let got = 0;

  const finish = (status: number, code: string, message: string) => {
    closed = true;
    const body = refusal(code, message);
    socket.end(answerHeadOf(status, Buffer.byteLength(body)) + body);
  };

  const run = (op: string, requestId: string | undefined, body: string) => {
    busy = true;
    // what the client sends meanwhile waits in the socket, not in this process
    socket.pause();
    void o.answer(op, body, requestId).then((a) => {
      busy = false;
      if (closed || socket.destroyed) return;
      // writing is activity: the idle timer starts over, even if it went off while the op ran
      socket.write(answerHeadOf(a.status, Buffer.byteLength(a.body)) + a.body);
      socket.resume();
      pump();
    });
  };

  const pump = (): void => {
    while (!busy && !closed) {
      if (awaiting) {
        if (got + buf.length < awaiting.length) {
          // the text so far is kept as its chunks, joined once when it is whole
          parts.push(buf);
          got += buf.length;
          buf = EMPTY;
          return;
        }
        const take = awaiting.length - got;
        const text = Buffer.concat([...parts, buf.subarray(0, take)]).toString('utf8');
        buf = buf.subarray(take);
        const { op, requestId } = awaiting;
        awaiting = undefined;
        parts = [];
        got = 0;
        run(op, requestId, text);
        continue;
      }
      const nl = buf.indexOf(NEWLINE);
      if (nl < 0) {
        if (buf.length > MAX_FRAME_HEAD) finish(400, 'bad_request', 'binding frame head too long');
        return;
      }
      const line = buf.toString('latin1', 0, nl);
      buf = buf.subarray(nl + 1);
      if (!authed) {
        // the preface: NUL, the secret (the first byte was checked by the caller)
        if (!o.authorised(line.slice(1))) return finish(401, 'unauthorized', 'missing or wrong binding secret');
        authed = true;
        continue;
      }
      const head = parseRequestHead(line);
      if (!head) return finish(400, 'bad_request', 'malformed binding frame head');
      if (head.length > o.limit) return finish(413, 'payload_too_large', `binding payload exceeds ${o.limit} bytes`);
      awaiting = head;
    }
  };

  socket.setTimeout(o.idleTimeoutMs);
  socket.on('timeout', () => {
    // a long operation (a command running for minutes) is not idleness
    if (!busy) socket.destroy();
  });
  socket.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    pump();
  });
  socket.on('error', () => socket.destroy());
  socket.on('close', () => (closed = true));
  pump();
}
