/**
 * The Deno entry's side of the framed hop, run in Node against a fake connection (it has no
 * node: or Deno imports of its own): the Outbox gathers what is sent while a write is under way,
 * holds a stream's producer back past OUTBOX_HIGH bytes, and serveHopConnection answers each
 * request by its id, in the order the answers are ready, and obeys pause, resume and cancel.
 * The edge tier runs the same code in Deno (test/edge).
 */
import { describe, expect, it, vi } from 'vitest';
import { ConnReader, Outbox, type DenoConn } from '../../runtime/isolate/deno-conn';
import { serveHopConnection, type HopApp } from '../../runtime/isolate/deno-hop';
import { hopControlOf, hopPrefaceOf, hopRequestHeadOf, hopResultHeadOf } from '../../runtime/isolate/hop-frames';
import type { Call, Reply } from '../../handlers/core/pipeline';
import type { BindingPost } from '../../handlers/core/bindings';

const enc = new TextEncoder();
const dec = new TextDecoder();
const tick = () => new Promise<void>((r) => setImmediate(r));

/** A connection whose writes are held until `release()`, and whose reads are what `feed` gave. */
function fakeConn() {
  const writes: string[] = [];
  const held: (() => void)[] = [];
  const incoming: Uint8Array[] = [];
  let reader: (() => void) | undefined;
  let ended = false;
  let holding = false;
  const conn: DenoConn = {
    async read(p) {
      while (incoming.length === 0 && !ended) await new Promise<void>((r) => (reader = r));
      const next = incoming.shift();
      if (!next) return null;
      p.set(next);
      return next.length;
    },
    write(p) {
      writes.push(dec.decode(p));
      if (!holding) return Promise.resolve(p.length);
      return new Promise((resolve) => held.push(() => resolve(p.length)));
    },
    close() {
      ended = true;
      reader?.();
    },
  };
  return {
    conn,
    writes,
    hold: () => (holding = true),
    /** lets the oldest held write finish */
    release: () => held.shift()?.(),
    feed(text: string) {
      incoming.push(enc.encode(text));
      const r = reader;
      reader = undefined;
      r?.();
    },
    end() {
      ended = true;
      reader?.();
    },
  };
}

describe('Outbox: what the entry writes on the hop', () => {
  it('gathers what is sent while a write is under way into the next write, in order', async () => {
    const f = fakeConn();
    f.hold();
    const out = new Outbox(f.conn);
    out.send(enc.encode('a'));
    out.send(enc.encode('b'));
    out.send(enc.encode('c'));
    expect(f.writes).toEqual(['a']);
    f.release();
    await tick();
    expect(f.writes).toEqual(['a', 'bc']);
  });

  it('joins any number of parts (no argument spread)', async () => {
    const f = fakeConn();
    f.hold();
    const out = new Outbox(f.conn);
    out.send(enc.encode('x'));
    for (let i = 0; i < 200_000; i++) out.send(enc.encode('y'));
    f.release();
    await tick();
    expect(f.writes.map((w) => w.length)).toEqual([1, 200_000]);
  });

  it('holds a producer back while 256 KiB or more wait, and lets it go once they are taken', async () => {
    const f = fakeConn();
    f.hold();
    const out = new Outbox(f.conn);
    out.send(new Uint8Array(10));
    let roomy = false;
    void out.room().then(() => (roomy = true));
    await tick();
    expect(roomy).toBe(true);
    out.send(new Uint8Array(256 * 1024 - 1));
    let waited = false;
    void out.room().then(() => (waited = true));
    await tick();
    // 10 bytes under way, 256 KiB - 1 waiting: under the mark
    expect(waited).toBe(true);
    out.send(new Uint8Array(1));
    let full = false;
    void out.room().then(() => (full = true));
    await tick();
    expect(full).toBe(false);
    f.release(); // the 10 bytes written: the 256 KiB are taken into the next write
    await tick();
    expect(full).toBe(true);
  });
});

describe('ConnReader: frames out of reads of any size', () => {
  /** a connection whose reads return `pieces` in order, then the end */
  const readsOf = (pieces: Uint8Array[]): DenoConn => ({
    read(p) {
      const next = pieces.shift();
      if (!next) return Promise.resolve(null);
      p.set(next);
      return Promise.resolve(next.length);
    },
    write: (p) => Promise.resolve(p.length),
    close: () => undefined,
  });
  const split = (bytes: Uint8Array, size: number) =>
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

  it('lines and bodies across reads of 100 bytes, then one of 1 MiB in reads of 1 KiB, come whole', async () => {
    const body = Uint8Array.from({ length: 10_000 }, (_, i) => i % 251);
    const large = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 7) % 256);
    const text = new Uint8Array([...enc.encode('abc\n'), ...body, ...enc.encode('é line\n')]);
    const r = new ConnReader(readsOf([...split(text, 100), ...split(large, 1024), enc.encode('end\n')]));
    expect(await r.line(64)).toBe('abc');
    expect(await r.take(body.length)).toEqual(body);
    expect(await r.line(64)).toBe('é line');
    expect(await r.take(large.length)).toEqual(large);
    expect(await r.line(64)).toBe('end');
    expect(await r.line(64)).toBeNull();
  });

  it('a frame of many reads grows its buffer by doubling, filling it in place between', async () => {
    const large = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 13) % 256);
    const pieces = split(large, 1024);
    const conn = readsOf(pieces);
    const r = new ConnReader(conn);
    // the store the reader's buffer lives in, at each read
    const stores = new Set<ArrayBufferLike>();
    const read = conn.read.bind(conn);
    conn.read = (p) => {
      stores.add((r as unknown as { buf: Uint8Array }).buf.buffer);
      return read(p);
    };
    expect(await r.take(large.length)).toEqual(large);
    // 1,024 reads: a new store about each doubling (2 KiB … 2 MiB), not one per read
    expect(stores.size).toBeLessThanOrEqual(14);
  });

  it('what is handed out is a copy: later reads do not change it', async () => {
    const r = new ConnReader(readsOf([enc.encode('ab'), enc.encode('cd'), enc.encode('ef'), enc.encode('gh')]));
    const first = await r.take(3);
    const rest = await r.take(5);
    expect([dec.decode(first), dec.decode(rest)]).toEqual(['abc', 'defgh']);
  });
});

const SECRET = 'k'.repeat(43);
const PREFACE = hopPrefaceOf(SECRET);

/**
 * An app whose answers the test makes: a reply per target, given when the test says; `posts`
 * holds the binding post each connection opened its doors with.
 */
function fakeApp() {
  const asked = new Map<string, (reply: Reply) => void>();
  const posts: BindingPost[] = [];
  const app: HopApp = {
    open: (post) => {
      posts.push(post);
      return {
        handle: (call: Call) => new Promise<Reply>((resolve) => asked.set(call.url.pathname, resolve)),
        fetch: () => Promise.reject(new Error('not used')),
      };
    },
    maxBodyBytes: 1 << 20,
    secret: SECRET,
  };
  return { app, asked, posts };
}

const request = (id: number, target: string) => {
  const h = JSON.stringify({ host: 'h' });
  return hopRequestHeadOf(id, 'GET', target, Buffer.byteLength(h), 0) + h;
};

/**
 * The entry serving a fake connection, with request `id` answered as an event stream of
 * `next()`'s pieces; `stopped()` says whether the entry stopped the app's stream.
 */
async function streaming(id: number, next: () => Promise<IteratorResult<string>>) {
  const f = fakeConn();
  const { app, asked } = fakeApp();
  const served = serveHopConnection(f.conn, app);
  let stopped = false;
  const chunks: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({
      next,
      return: async () => {
        stopped = true;
        return { value: undefined, done: true };
      },
    }),
  };
  f.feed(request(id, '/events'));
  while (!asked.has('/events')) await tick();
  asked.get('/events')!({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: null, chunks });
  return { f, served, stopped: () => stopped };
}

describe('serveHopConnection: the entry answers each exchange by its id', () => {
  it('answers in the order the app has them, each frame named by its request', async () => {
    const f = fakeConn();
    const { app, asked } = fakeApp();
    const served = serveHopConnection(f.conn, app);
    f.feed(request(1, '/a') + request(2, '/b'));
    while (asked.size < 2) await tick();
    asked.get('/b')!({ status: 201, headers: { 'content-type': 'application/json' }, body: '"b"' });
    asked.get('/a')!({ status: 200, headers: {}, body: '"a"' });
    await tick();
    const json = JSON.stringify({ 'content-type': 'application/json' });
    const plain = JSON.stringify({ 'content-type': 'text/plain;charset=UTF-8' });
    expect(f.writes.join('')).toBe(
      PREFACE + `2 201 ${json.length} 3\n${json}"b"` + `1 200 ${plain.length} 3\n${plain}"a"`,
    );
    f.end();
    await served;
  });

  it('a stream: pause holds its pieces, resume lets them go, cancel stops the app and ends the id', async () => {
    let pulled = 0;
    const { f, served, stopped } = await streaming(7, async () => {
      pulled++;
      await tick();
      return { value: `data: ${pulled}\n\n`, done: false };
    });
    while (pulled < 3) await tick();
    f.feed(hopControlOf(7, 'pause'));
    for (let i = 0; i < 5; i++) await tick();
    const atPause = pulled;
    for (let i = 0; i < 20; i++) await tick();
    // at most the piece under way when the pause came
    expect(pulled).toBeLessThanOrEqual(atPause + 1);
    f.feed(hopControlOf(7, 'resume'));
    const resumedAt = pulled;
    while (pulled < resumedAt + 3) await tick();
    f.feed(hopControlOf(7, 'cancel'));
    while (!stopped()) await tick();
    await tick();
    const text = f.writes.join('').slice(PREFACE.length);
    const sse = JSON.stringify({ 'content-type': 'text/event-stream' });
    const head = `7 200 ${sse.length} *\n${sse}7 9\ndata: 1\n\n7 9\ndata: 2\n\n`;
    expect(text.slice(0, head.length)).toBe(head);
    expect(text.slice(-4)).toBe('7 0\n');
    f.end();
    await served;
  });

  it('when the host goes away, a stream under way is stopped', async () => {
    // no event yet: the entry waits on the app's next piece when the host leaves
    const { f, served, stopped } = await streaming(3, () => new Promise<IteratorResult<string>>(() => undefined));
    await tick();
    f.end();
    await served;
    while (!stopped()) await tick();
    expect(stopped()).toBe(true);
  });

  it("the app's binding calls go out on the connection, numbered; each result resolves its own", async () => {
    const f = fakeConn();
    const { app, posts } = fakeApp();
    const served = serveHopConnection(f.conn, app);
    expect(posts).toHaveLength(1);
    const post = posts[0];
    const a = post('/db/all', '{"sql":"é"}', 'rid-1');
    const b = post('/events/send', '{}');
    await tick();
    expect(f.writes.join('')).toBe(
      PREFACE + `1 call /db/all rid-1 ${Buffer.byteLength('{"sql":"é"}')}\n{"sql":"é"}` + '2 call /events/send - 2\n{}',
    );
    // answered last first, the text split over two reads
    const second = hopResultHeadOf(2, 404, 4) + 'null';
    const first = hopResultHeadOf(1, 200, Buffer.byteLength('["é"]')) + '["é"]';
    f.feed(second + first.slice(0, 12));
    f.feed(first.slice(12));
    expect(await b).toEqual({ status: 404, body: 'null' });
    expect(await a).toEqual({ status: 200, body: '["é"]' });
    // the ids go on from the last one
    const third = post('/db/first', '{}').catch((e: Error) => e.message);
    await tick();
    expect(f.writes.join('').endsWith('3 call /db/first - 2\n{}')).toBe(true);
    f.end();
    await served;
    expect(await third).toBe('the host closed the hop connection');
  });

  it('a result for no call (or a second one) ends the connection; the calls waiting fail, and later ones at once', async () => {
    const f = fakeConn();
    const { app, posts } = fakeApp();
    const served = serveHopConnection(f.conn, app);
    const first = posts[0]('/db/all', '{}');
    const waiting = posts[0]('/db/all', '[]').then(
      () => 'answered',
      (e: Error) => e.message,
    );
    await tick();
    f.feed(hopResultHeadOf(1, 200, 4) + 'null');
    expect(await first).toEqual({ status: 200, body: 'null' });
    f.feed(hopResultHeadOf(1, 200, 4) + 'null');
    await served;
    expect(await waiting).toBe('the host closed the hop connection');
    await expect(posts[0]('/db/all', '{}')).rejects.toThrow('the host closed the hop connection');
    // nothing more went out after the two calls
    expect(f.writes.join('')).toBe(PREFACE + '1 call /db/all - 2\n{}2 call /db/all - 2\n[]');
  });

  it('a result for a call never made ends the connection too, and says so', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const f = fakeConn();
      const served = serveHopConnection(f.conn, fakeApp().app);
      f.feed(hopResultHeadOf(5, 200, 4) + 'null');
      await served;
      expect(f.writes.join('')).toBe(PREFACE);
      expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([
        'ballast deno entry: hop connection: a result for no call (5)',
      ]);
    } finally {
      errors.mockRestore();
    }
  });
});
