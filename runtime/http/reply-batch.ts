/**
 * The answers of one event-loop turn go to their sockets together, at the end of the turn's
 * I/O (a setImmediate), not one by one between the requests being read.
 *
 * Why: an answer's `writev` on loopback or a LAN wakes the client's side, and a client (or a
 * proxy) that is asleep costs the writer a wake-up in the kernel each time. Written one by one,
 * interleaved with reading and handling the next requests, nearly every answer paid it: on the
 * bench's DB route the host spent ~34 µs of each request in `writev` against the bare server's
 * ~17 µs, and half its CPU went to the kernel. Written back to back, only the first answer of a
 * turn wakes the peer; the DB route's CPU per request went from ~98 to ~49 µs.
 *
 * An answer made after the turn's flush (in the same check phase, e.g. one released by the
 * audit batch's commit, runtime/db/audit.ts) is written at once: it is already among the
 * turn's last writes, and waiting for the next turn would only add the next turn's reading to
 * its time. `arrive()` (a request, or an isolate's answer to one, was read: the poll phase)
 * re-arms the batch and makes sure this turn flushes.
 *
 * What a request sees is unchanged: the same bytes, and its log line, metrics and audit rows
 * follow its write (the `done` callback); a write that throws reaches `done` as its error.
 */
import type http from 'node:http';
import type { Reply } from '../../handlers/core/pipeline';

export class ReplyBatch<Res, R> {
  private queue: Array<{ res: Res; reply: R; done: (error?: unknown) => void }> = [];
  private scheduled: NodeJS.Immediate | undefined;
  /** the turn's flush has run: what comes now is written at once */
  private flushed = false;

  /** `writeOne` puts one answer on its socket (writeReply below). */
  constructor(private readonly writeOne: (res: Res, reply: R) => void) {}

  /** A request was read: its answer waits for this turn's flush. */
  arrive(): void {
    this.flushed = false;
    this.scheduled ??= setImmediate(this.flush);
  }

  /**
   * Writes now (after this turn's flush) or at the flush; `done` follows the write either way
   * and must not throw (the answers after it in the batch are still to be written).
   */
  write(res: Res, reply: R, done: (error?: unknown) => void): void {
    if (this.flushed) {
      this.run(res, reply, done);
      return;
    }
    this.queue.push({ res, reply, done });
    this.scheduled ??= setImmediate(this.flush);
  }

  /** How many answers wait (tests). */
  get waiting(): number {
    return this.queue.length;
  }

  private readonly flush = (): void => {
    this.scheduled = undefined;
    this.flushed = true;
    const queue = this.queue;
    this.queue = [];
    for (const q of queue) this.run(q.res, q.reply, q.done);
  };

  private run(res: Res, reply: R, done: (error?: unknown) => void): void {
    try {
      this.writeOne(res, reply);
    } catch (e) {
      done(e);
      return;
    }
    done();
  }
}

/** A reply body's length on the wire: JSON text as UTF-8, bytes as they are. */
export function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
}

/** A one-piece answer: the JSON text goes to the socket as it is (no Buffer copy), with its byte length. */
export function writeReply(res: http.ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { ...reply.headers };
  const body = reply.body;
  if (body !== null) headers['content-length'] = String(byteLength(body));
  res.writeHead(reply.status, headers);
  if (body === null) res.end();
  else if (typeof body === 'string') res.end(body, 'utf8');
  else res.end(body); // bytes (a docs asset, gzip or not): as they are
}

/**
 * The host process's answers to its clients (one event loop, one batch, whichever server wrote
 * them). Whatever reads what an answer is made of calls arrive(): the server a client's request,
 * the hop an isolate's answer (runtime/isolate/forward*.ts), so that those answers wait for the
 * turn's flush too.
 */
export const answers = new ReplyBatch<http.ServerResponse, Reply>(writeReply);
