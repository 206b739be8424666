/**
 * The framed hop's client (runtime/isolate/forward-framed.ts) against a fake isolate on a Unix
 * socket that reads request frames with the same codec (hop-frames.ts) and answers as each test
 * says, byte by byte where it matters: what goes out, what a reply is made of, event streams,
 * a client that goes away, broken answers, and how connections are kept and limited. The Deno
 * entry's side (deno-hop.ts) is run by the edge tier (test/edge), where node, workerd and Deno
 * must answer every example identically.
 */
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TokenLookup } from '../../handlers/core/bindings';
import { HOP_SECRET_HEADER, TOKEN_ROW_HEADER, encodeTokenRow } from '../../handlers/core/hop';
import { framedForwarder } from '../../runtime/isolate/forward-framed';
import {
  hopAnswerHeadOf,
  hopChunkHeadOf,
  hopRequestHeadOf,
  MAX_HOP_HEAD,
  parseHopAnswerHead,
  parseHopChunkHead,
  parseHopRequestHead,
} from '../../runtime/isolate/hop-frames';
import { privateDir } from '../helpers/tmp';
import { callOf, expectAnswerArrives, heldBackStream, HOP_TOKEN, hopTokenRow, replyText } from '../helpers/hop';

describe('hop frame heads', () => {
  it('a request head: method, target, the headers JSON and the body byte lengths', () => {
    expect(hopRequestHeadOf('POST', '/api/v2/pod?x=%20', 12, 0)).toBe('POST /api/v2/pod?x=%20 12 0\n');
    expect(parseHopRequestHead('POST /api/v2/pod?x=%20 12 0')).toEqual({
      method: 'POST',
      target: '/api/v2/pod?x=%20',
      headersLength: 12,
      bodyLength: 0,
    });
    expect(parseHopRequestHead('GET / 2 9999999999')).toEqual({
      method: 'GET',
      target: '/',
      headersLength: 2,
      bodyLength: 9999999999,
    });
    for (const line of [
      '',
      'get / 2 0',
      'GET x 2 0',
      'GET / 2',
      'GET / 02 0',
      'GET / 2 0 ',
      'GET /a b 2 0',
      'GET / -1 0',
      'GET / 2 10000000000',
      'GET / 2 0\r',
    ])
      expect(parseHopRequestHead(line), line).toBeNull();
  });

  it('an answer head: status, the headers JSON length, the body length or * for chunks', () => {
    expect(hopAnswerHeadOf(200, 30, 5)).toBe('200 30 5\n');
    expect(hopAnswerHeadOf(200, 30, '*')).toBe('200 30 *\n');
    expect(parseHopAnswerHead('200 30 5')).toEqual({ status: 200, headersLength: 30, bodyLength: 5 });
    expect(parseHopAnswerHead('200 30 *')).toEqual({ status: 200, headersLength: 30, bodyLength: null });
    expect(parseHopAnswerHead('599 0 0')).toEqual({ status: 599, headersLength: 0, bodyLength: 0 });
    for (const line of ['', '200 30', '600 1 1', '099 1 1', '200 1 **', '200 * 1', '200 01 1', 'HTTP/1.1 200 OK'])
      expect(parseHopAnswerHead(line), line).toBeNull();
  });

  it('a chunk head is its length; 0 ends', () => {
    expect(hopChunkHeadOf(17)).toBe('17\n');
    expect(parseHopChunkHead('17')).toBe(17);
    expect(parseHopChunkHead('0')).toBe(0);
    for (const line of ['', '-1', '017', '1 ', 'a', '10000000000']) expect(parseHopChunkHead(line), line).toBeNull();
  });
});

type Seen = { method: string; target: string; headers: Record<string, string | string[]>; body: string };
/** How the fake isolate answers a request on its connection (raw frames). */
type Answer = (seen: Seen, conn: net.Socket) => void;

const socketPath = join(privateDir('ballast-framed-hop'), 'isolate.sock');
const seen: Seen[] = [];
const connections: net.Socket[] = [];
/** resolved when the fake isolate sees a connection end (the host closed it) */
let ended: Promise<void> = Promise.resolve();
let endedNow = () => undefined as void;
const json = (headers: Record<string, string>) => JSON.stringify(headers);
/** a whole answer as one frame */
const frame = (status: number, headers: Record<string, string>, body = '') =>
  hopAnswerHeadOf(status, Buffer.byteLength(json(headers)), Buffer.byteLength(body)) + json(headers) + body;
let answer: Answer = (_s, conn) => conn.write(frame(200, { 'content-type': 'application/json' }, '{}'));
let server: net.Server;

beforeAll(async () => {
  server = net.createServer((conn) => {
    connections.push(conn);
    conn.on('close', () => endedNow());
    let buf = Buffer.alloc(0);
    conn.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const head = parseHopRequestHead(buf.toString('latin1', 0, nl));
        if (!head) throw new Error(`bad request frame: ${buf.toString('latin1', 0, nl)}`);
        const end = nl + 1 + head.headersLength + head.bodyLength;
        if (buf.length < end) return;
        const s: Seen = {
          method: head.method,
          target: head.target,
          headers: JSON.parse(buf.toString('utf8', nl + 1, nl + 1 + head.headersLength)) as Seen['headers'],
          body: buf.toString('utf8', nl + 1 + head.headersLength, end),
        };
        buf = buf.subarray(end);
        seen.push(s);
        answer(s, conn);
      }
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
});
afterAll(async () => {
  for (const c of connections) c.destroy();
  await new Promise((r) => server.close(r));
});

const row = hopTokenRow;
const TOKEN = HOP_TOKEN;
const tokens: TokenLookup = { token: (id) => (id === row.id ? row : null), touch: () => undefined };

const text = replyText;

describe('the framed hop to the isolate', () => {
  let fwd: ReturnType<typeof framedForwarder>;
  beforeAll(() => {
    fwd = framedForwarder(socketPath, { secret: 'hop-secret', tokens });
  });
  afterAll(() => fwd.close());
  afterEach(() => {
    seen.length = 0;
    answer = (_s, conn) => conn.write(frame(200, { 'content-type': 'application/json' }, '{}'));
  });

  it("sends the method, the target, the client's headers without the hop's own, the host's, and the body", async () => {
    const call = await callOf('http://box.example:8443/api/v2/pod?x=1&y=%20', {
      method: 'POST',
      body: '{"name":"née"}',
      headers: { token: TOKEN, accept: 'application/json', 'accept-encoding': 'gzip', [HOP_SECRET_HEADER]: 'forged' },
    });
    call.requestId = 'host-request-1';
    call.connection = { remoteAddress: '192.0.2.7' };
    call.note = {};
    expect(await text(await fwd.handle(call))).toBe('{}');
    expect(seen).toHaveLength(1);
    const s = seen[0];
    expect([s.method, s.target, s.body]).toEqual(['POST', '/api/v2/pod?x=1&y=%20', '{"name":"née"}']);
    expect(s.headers).toMatchObject({
      host: 'box.example:8443',
      token: TOKEN,
      accept: 'application/json',
      'x-request-id': 'host-request-1',
      [HOP_SECRET_HEADER]: 'hop-secret',
      [TOKEN_ROW_HEADER]: encodeTokenRow(row),
      // the body's length in bytes: the isolate makes a body exactly when it is there
      'content-length': String(Buffer.byteLength('{"name":"née"}')),
    });
    expect(s.headers['accept-encoding']).toBeUndefined();
    expect(call.note.presented).toBe(row);
  });

  it('a GET sends no body (its fields go onto the query) and no length', async () => {
    await fwd.handle(
      await callOf('http://h/api/v2/fs/explore?a=1', { method: 'POST' }).then((c) => ({
        ...c,
        method: 'GET',
        bodyText: '{"path":"/srv"}',
      })),
    );
    expect(seen[0].target).toBe('/api/v2/fs/explore?a=1&path=%2Fsrv');
    expect(seen[0].body).toBe('');
    expect(seen[0].headers['content-length']).toBeUndefined();
  });

  it("an isolate's answer read from the hop goes to its client with the turn's other answers (arrive)", () =>
    expectAnswerArrives(async () => fwd.handle(await callOf('http://h/api/v2/x'))));

  it("reads the answer: status, the isolate's headers less the hop's, the bytes as they are", async () => {
    answer = (_s, conn) =>
      conn.write(
        frame(
          201,
          {
            'content-type': 'application/json',
            date: 'x',
            'content-length': '99',
            'x-request-id': 'r1',
            'set-cookie': 'a=1, b=2',
          },
          '{"é":1}',
        ),
      );
    const r = await fwd.handle(await callOf('http://h/api/v2/x'));
    expect(r.status).toBe(201);
    expect(r.headers).toEqual({ 'content-type': 'application/json', 'x-request-id': 'r1', 'set-cookie': 'a=1, b=2' });
    expect(Buffer.from(r.body as Uint8Array).toString()).toBe('{"é":1}');
  });

  it('HEAD, 204 and 304 have no body', async () => {
    answer = (s, conn) =>
      conn.write(frame(s.target.endsWith('204') ? 204 : s.target.endsWith('304') ? 304 : 200, {}, ''));
    expect((await fwd.handle(await callOf('http://h/x', { method: 'HEAD' }))).body).toBeNull();
    expect((await fwd.handle(await callOf('http://h/204'))).body).toBeNull();
    expect((await fwd.handle(await callOf('http://h/304'))).body).toBeNull();
    const empty = await fwd.handle(await callOf('http://h/200'));
    expect(empty.body).toEqual(new Uint8Array(0));
  });

  it('an event stream comes piece by piece, a split UTF-8 character whole, and ends with its last chunk', async () => {
    let more!: () => void;
    const gotFirst = new Promise<void>((r) => (more = r));
    answer = (_s, conn) => {
      conn.write(hopAnswerHeadOf(200, 38, '*') + json({ 'content-type': 'text/event-stream' }).padEnd(38, ' '));
      conn.write(hopChunkHeadOf(7) + 'data: 1');
      void gotFirst.then(() => {
        const e = Buffer.from('\n\ndata: é\n\n');
        const cut = e.indexOf(0xc3) + 1;
        conn.write(Buffer.concat([Buffer.from(hopChunkHeadOf(cut)), e.subarray(0, cut)]));
        conn.write(Buffer.concat([Buffer.from(hopChunkHeadOf(e.length - cut)), e.subarray(cut)]));
        conn.write(hopChunkHeadOf(0));
      });
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/jobs/j1/events'));
    expect([r.status, r.body, r.headers['content-type']]).toEqual([200, null, 'text/event-stream']);
    const pieces: string[] = [];
    for await (const p of r.chunks!) {
      pieces.push(p);
      if (pieces.length === 1) more();
    }
    expect(pieces.join('')).toBe('data: 1\n\ndata: é\n\n');
    expect(pieces.every((p) => !p.includes('\ufffd'))).toBe(true);
    // the connection is kept for the next call
    answer = (_s, conn) => conn.write(frame(200, { 'content-type': 'application/json' }, '{}'));
    const before = connections.filter((c) => !c.destroyed).length;
    expect(await text(await fwd.handle(await callOf('http://h/api/v2/x')))).toBe('{}');
    expect(connections.filter((c) => !c.destroyed).length).toBe(before);
  });

  it('the client going away ends the connection the stream came on', async () => {
    ended = new Promise<void>((r) => (endedNow = r));
    answer = (_s, conn) => {
      const h = json({ 'content-type': 'text/event-stream' });
      conn.write(hopAnswerHeadOf(200, Buffer.byteLength(h), '*') + h + hopChunkHeadOf(6) + 'data:1');
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/jobs/j1/events'));
    for await (const p of r.chunks!) {
      expect(p).toBe('data:1');
      break;
    }
    await ended;
    endedNow = () => undefined;
  });

  it('an answer cut short, or not framed, is an error; the next call gets a new connection', async () => {
    answer = (_s, conn) => {
      conn.write(hopAnswerHeadOf(200, 2, 10) + '{}' + 'abc');
      conn.destroy();
    };
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/closed the connection/);
    answer = (_s, conn) => conn.write('HTTP/1.1 200 OK\r\n\r\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not an answer head/);
    answer = (_s, conn) => conn.write(hopAnswerHeadOf(200, 5, 0) + 'nope!');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/headers that are not JSON/);
    answer = (_s, conn) => conn.write(hopAnswerHeadOf(200, 2, '*') + '{}' + hopChunkHeadOf(2) + 'ab' + 'x\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not a chunk head/);
    answer = (_s, conn) => conn.write('2'.repeat(MAX_HOP_HEAD + 1));
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/head line too long/);
    answer = (_s, conn) => conn.write(frame(200, {}, '{}'));
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('{}');
  });

  it('an answer in chunks that is not an event stream is one body, whole at its end', async () => {
    answer = (_s, conn) => {
      const h = json({ 'content-type': 'application/json' });
      conn.write(hopAnswerHeadOf(200, Buffer.byteLength(h), '*') + h + hopChunkHeadOf(3) + '[1,');
      setTimeout(() => conn.write(hopChunkHeadOf(2) + '2]' + hopChunkHeadOf(0)), 20);
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/fs/explore'));
    expect(r.chunks).toBeUndefined();
    expect(Buffer.from(r.body as Uint8Array).toString()).toBe('[1,2]');
    expect(r.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('an answer head: an empty line is none, the longest is waited for, and it may come in pieces', async () => {
    answer = (_s, conn) => conn.write('\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not an answer head/);
    answer = (_s, conn) => {
      conn.write('2'.repeat(MAX_HOP_HEAD));
      setTimeout(() => conn.write('\n'), 20);
    };
    const e = await fwd.handle(await callOf('http://h/x')).then(
      () => null,
      (x: Error) => x.message,
    );
    // not "too long", and the head is quoted only in part
    expect(e).toMatch(/^the isolate's answer: not an answer head: "2{80}"$/);
    answer = (_s, conn) => {
      const whole = frame(200, { 'content-type': 'application/json' }, '"slow"');
      conn.write(whole.slice(0, 2));
      setTimeout(() => conn.write(whole.slice(2, 5)), 10);
      setTimeout(() => conn.write(whole.slice(5)), 20);
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('"slow"');
  });

  it("while nobody reads an event stream, the isolate's writes are held back; then everything arrives", async () => {
    const big = heldBackStream();
    answer = (_s, conn) => {
      const h = json({ 'content-type': 'text/event-stream' });
      conn.write(hopAnswerHeadOf(200, Buffer.byteLength(h), '*') + h);
      big.run(
        (piece) => conn.write(hopChunkHeadOf(piece.length) + piece),
        (more) => conn.once('drain', more),
        () => conn.write(hopChunkHeadOf(0)),
      );
    };
    const r = await big.readAfterStall(await fwd.handle(await callOf('http://h/api/v2/jobs/j/events')));
    expect(r.atStall).toBeLessThan(big.total);
    expect([r.atEnd, r.read]).toEqual([big.total, big.total * big.piece.length]);
  });

  it('a stream cut short fails its reader', async () => {
    answer = (_s, conn) => {
      const h = json({ 'content-type': 'text/event-stream' });
      conn.write(hopAnswerHeadOf(200, Buffer.byteLength(h), '*') + h + hopChunkHeadOf(6) + 'data:1');
      setTimeout(() => conn.destroy(), 20);
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/jobs/j1/events'));
    await expect(text(r)).rejects.toThrow(/closed the connection/);
  });

  it('bytes from the isolate while nothing was asked drop the connection', async () => {
    let used: net.Socket | undefined;
    answer = (_s, conn) => {
      used = conn;
      conn.write(frame(200, {}, '{}') + 'extra');
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('{}');
    const first = used!;
    await new Promise<void>((r) => (first.closed ? r() : first.once('close', () => r())));
    answer = (_s, conn) => {
      used = conn;
      conn.write(frame(200, {}, '"again"'));
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('"again"');
    expect(used).not.toBe(first);
  });

  it('one connection per call in flight, kept between calls, at most 64', async () => {
    const own = framedForwarder(socketPath, { secret: 's' });
    try {
      const first = connections.length;
      await own.handle(await callOf('http://h/a'));
      await own.handle(await callOf('http://h/b'));
      expect(connections.length - first).toBe(1);
      // 70 at once: 64 connections; the other 6 wait for one and are answered on it
      const held: (() => void)[] = [];
      answer = (_s, conn) => held.push(() => conn.write(frame(200, {}, '1')));
      const calls = await Promise.all(Array.from({ length: 70 }, (_, i) => callOf(`http://h/c${i}`)));
      const replies = calls.map((c) => own.handle(c));
      await new Promise((r) => setTimeout(r, 100));
      expect(connections.length - first).toBe(64);
      expect(held.length).toBe(64);
      while (held.length || seen.length < 72) {
        held.shift()?.();
        await new Promise((r) => setTimeout(r, 1));
      }
      expect((await Promise.all(replies)).every((r) => r.status === 200)).toBe(true);
      expect(connections.length - first).toBe(64);
    } finally {
      own.close();
    }
  });

  it('a connection that ends leaves the idle ones idle; a call waiting for one gets a new one', async () => {
    const own = framedForwarder(socketPath, { secret: 's' });
    try {
      const first = connections.length;
      const held: (() => void)[] = [];
      answer = (_s, conn) => held.push(() => conn.write(frame(200, {}, '1')));
      // three at once: three connections, then idle
      const three = await Promise.all(['a', 'b', 'c'].map((p) => callOf(`http://h/${p}`)));
      const done = three.map((c) => own.handle(c));
      await new Promise((r) => setTimeout(r, 30));
      for (const h of held.splice(0)) h();
      await Promise.all(done);
      // one more, whose connection the isolate then drops: the two idle ones stay
      let dropped!: net.Socket;
      answer = (_s, conn) => {
        dropped = conn;
        conn.destroy();
      };
      await expect(own.handle(await callOf('http://h/d'))).rejects.toThrow(/closed the connection/);
      await new Promise<void>((r) => (dropped.closed ? r() : dropped.once('close', () => r())));
      answer = (_s, conn) => held.push(() => conn.write(frame(200, {}, '2')));
      const two = await Promise.all(['e', 'f'].map((p) => callOf(`http://h/${p}`)));
      const again = two.map((c) => own.handle(c));
      await new Promise((r) => setTimeout(r, 30));
      for (const h of held.splice(0)) h();
      await Promise.all(again);
      expect(connections.length - first).toBe(3);
    } finally {
      own.close();
    }
  });

  it('closed: its connections end, and a call is refused', async () => {
    const own = framedForwarder(socketPath, { secret: 's' });
    const before = connections.length;
    await own.handle(await callOf('http://h/a'));
    const conn = connections[before];
    own.close();
    await new Promise<void>((r) => (conn.closed ? r() : conn.once('close', () => r())));
    await expect(own.handle(await callOf('http://h/b'))).rejects.toThrow('the hop to the isolate is closed');
  });

  it('fetch: a WHATWG request through the same hop', async () => {
    answer = (s, conn) => conn.write(frame(200, { 'content-type': 'application/json' }, JSON.stringify(s.target)));
    const res = await fwd.fetch(new Request('http://h/api/v2/x?q=1'));
    expect([res.status, await res.text()]).toEqual([200, '"/api/v2/x?q=1"']);
  });
});
