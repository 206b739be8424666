/**
 * A framed binding connection (runtime/bindings/frames.ts) for tests: raw bytes out, the answers
 * parsed as they arrive, and whether the host closed the connection.
 */
import net from 'node:net';
import { parseAnswerHead, prefaceOf, requestHeadOf } from '../../runtime/bindings/frames';

export interface FramedAnswer {
  status: number;
  body: string;
}

export interface FramedTestClient {
  socket: net.Socket;
  /** bytes as they are (a preface, a head, a body, or parts of them) */
  send(bytes: string | Buffer): void;
  /** a whole request: head and JSON text */
  request(op: string, body: string, requestId?: string): void;
  /** the next answer; rejects when the connection ends first */
  answer(): Promise<FramedAnswer>;
  /** resolves when the host has closed the connection */
  closed: Promise<void>;
}

export async function connectFramed(path: string, secret?: string): Promise<FramedTestClient> {
  const socket = net.connect(path);
  await new Promise<void>((ok, fail) => socket.once('connect', ok).once('error', fail));
  let buf = Buffer.alloc(0);
  const answers: FramedAnswer[] = [];
  const waiting: { ok: (a: FramedAnswer) => void; fail: (e: Error) => void }[] = [];
  let ended = false;
  const closed = new Promise<void>((done) =>
    socket.once('close', () => {
      ended = true;
      for (const w of waiting.splice(0)) w.fail(new Error('connection closed'));
      done();
    }),
  );
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0) return;
      const head = parseAnswerHead(buf.toString('latin1', 0, nl));
      if (!head) throw new Error(`not an answer head: ${buf.toString('latin1', 0, nl)}`);
      if (buf.length < nl + 1 + head.length) return;
      const a = { status: head.status, body: buf.toString('utf8', nl + 1, nl + 1 + head.length) };
      buf = buf.subarray(nl + 1 + head.length);
      const w = waiting.shift();
      if (w) w.ok(a);
      else answers.push(a);
    }
  });
  if (secret !== undefined) socket.write(prefaceOf(secret));
  return {
    socket,
    closed,
    send: (bytes) => socket.write(bytes),
    request: (op, body, requestId) => socket.write(requestHeadOf(op, requestId, Buffer.byteLength(body)) + body),
    answer: () => {
      const a = answers.shift();
      if (a) return Promise.resolve(a);
      if (ended) return Promise.reject(new Error('connection closed'));
      return new Promise((ok, fail) => waiting.push({ ok, fail }));
    },
  };
}

/**
 * env.BINDING_POST as the Deno entry makes it (handlers/core/bindings.ts BindingPost), over one
 * framed connection at a time: calls wait their turn; a closed connection is replaced.
 */
export function framedPost(
  path: string,
  secret: string,
): (op: string, body: string, requestId?: string) => Promise<FramedAnswer> {
  let conn: Promise<FramedTestClient> | undefined;
  let turn: Promise<unknown> = Promise.resolve();
  const post = async (op: string, body: string, requestId?: string) => {
    conn ??= connectFramed(path, secret);
    const c = await conn;
    if (c.socket.destroyed) {
      conn = undefined;
      return post(op, body, requestId);
    }
    c.request(op, body, requestId);
    return c.answer();
  };
  return (op, body, requestId) => {
    const mine = turn.then(() => post(op, body, requestId));
    turn = mine.catch(() => undefined);
    return mine;
  };
}
