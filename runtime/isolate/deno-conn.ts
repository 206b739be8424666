/**
 * The Deno entry's hop connection (no node: imports): read as frames, one buffer of what was read
 * and not yet taken (ConnReader; its one reader is the connection's loop, deno-hop.ts), and its
 * writes gathered while one is under way (Outbox).
 */

export interface DenoConn {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

const dec = new TextDecoder();
const NEWLINE = 10;

export class ConnReader {
  /** what was read and not yet taken */
  private buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  /**
   * Every read lands here (one buffer per connection, not a fresh 64 KiB per read); what fits one
   * read, as nearly every frame does, is then a single copy out of it.
   */
  private readonly chunk = new Uint8Array(64 * 1024);
  constructor(private readonly conn: DenoConn) {}

  /** One more read into the buffer; false at the end. */
  private async fill(): Promise<boolean> {
    const n = await this.conn.read(this.chunk);
    if (n === null) return false;
    this.append(n);
    return true;
  }

  /**
   * The `n` bytes just read, after what waits. A frame larger than a read (a file's text in a
   * binding result, up to 64 MiB) grows the buffer by doubling, in place while its store has
   * room after what waits: a copy of everything at each 64 KiB read would be quadratic.
   */
  private append(n: number): void {
    const len = this.buf.length;
    if (len === 0) {
      this.buf = this.chunk.slice(0, n);
      return;
    }
    const store = this.buf.buffer;
    const at = this.buf.byteOffset;
    if (at + len + n <= store.byteLength) {
      // taken bytes are handed out as copies (take), so the room after the view is free
      new Uint8Array(store, at + len, n).set(this.chunk.subarray(0, n));
      this.buf = new Uint8Array(store, at, len + n);
      return;
    }
    const next = new Uint8Array(Math.max(2 * (len + n), this.chunk.length));
    next.set(this.buf);
    next.set(this.chunk.subarray(0, n), len);
    this.buf = next.subarray(0, len + n);
  }

  /**
   * The next line, without its newline; null when the connection ended before any byte of it.
   * A line longer than `max` bytes, or one the end cuts short, is an error.
   */
  async line(max: number): Promise<string | null> {
    for (;;) {
      const nl = this.buf.indexOf(NEWLINE);
      if (nl >= 0) {
        const text = dec.decode(this.buf.subarray(0, nl));
        this.buf = this.buf.subarray(nl + 1);
        return text;
      }
      if (this.buf.length > max) throw new Error(`a frame head longer than ${max} bytes`);
      if (!(await this.fill())) {
        if (this.buf.length === 0) return null;
        throw new Error('the connection closed in the middle of a frame head');
      }
    }
  }

  /** The next `n` bytes. */
  async take(n: number): Promise<Uint8Array<ArrayBuffer>> {
    while (this.buf.length < n)
      if (!(await this.fill())) throw new Error('the connection closed in the middle of a frame');
    const out = this.buf.slice(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
}

/** All of `bytes`, however many writes the socket takes. */
async function writeAll(conn: DenoConn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** The parts as one array (one write). */
export function joined(...parts: Uint8Array[]): Uint8Array {
  return concat(parts);
}

/** Bytes waiting in an Outbox past which a stream's producer waits (the socket's own backpressure). */
const OUTBOX_HIGH = 256 * 1024;

/**
 * What the entry writes on a connection, in order: whatever is asked while a write is under way
 * goes out with the next one, so the answers of a burst cost a write or two, not one each.
 */
export class Outbox {
  private queue: Uint8Array[] = [];
  private queued = 0;
  private writing = false;
  private waiting: (() => void)[] = [];
  constructor(private readonly conn: DenoConn) {}

  send(bytes: Uint8Array): void {
    this.queue.push(bytes);
    this.queued += bytes.length;
    if (!this.writing) void this.drain();
  }

  /** Resolves once what waits (not the write under way) is under OUTBOX_HIGH bytes (a stream's producer waits for it). */
  room(): Promise<void> {
    if (this.queued < OUTBOX_HIGH) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length) {
        const parts = this.queue;
        const size = this.queued;
        this.queue = [];
        this.queued = 0;
        // taken into this write: a held-back producer may queue the next one meanwhile
        this.wake();
        await writeAll(this.conn, parts.length === 1 ? parts[0] : concat(parts, size));
      }
    } catch {
      // the host went away: its reader sees the connection end
      this.queue = [];
      this.queued = 0;
    } finally {
      this.writing = false;
      this.wake();
    }
  }

  private wake(): void {
    if (this.queued >= OUTBOX_HIGH) return;
    const w = this.waiting;
    this.waiting = [];
    for (const f of w) f();
  }
}

/** The parts as one array of `size` bytes (however many parts: no spread). */
function concat(parts: Uint8Array[], size = parts.reduce((n, p) => n + p.length, 0)): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
