/**
 * The framed hop's client (runtime/isolate/forward-framed.ts) against a fake isolate on a Unix
 * socket that reads the host's frames with the same codec (hop-frames.ts) and answers as each
 * test says, byte by byte where it matters: what goes out, what a reply is made of, event streams
 * and their control frames, a client that goes away, broken answers, and the one connection every
 * exchange shares. The Deno entry's side (deno-hop.ts) is run by the edge tier (test/edge), where
 * node, workerd and Deno must answer every example identically.
 */
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TokenLookup } from '../../handlers/core/bindings';
import { HOP_SECRET_HEADER, TOKEN_ROW_HEADER, encodeTokenRow } from '../../handlers/core/hop';
import { framedForwarder, HOP_FLUSH_FRAMES, type HopCalls } from '../../runtime/isolate/forward-framed';
import { secretCheck } from '../../runtime/bindings/socket';
import {
  hopAnswerHeadOf,
  hopCallHeadOf,
  hopChunkHeadOf,
  hopControlOf,
  hopPrefaceOf,
  hopRequestHeadOf,
  hopResultHeadOf,
  MAX_HOP_HEAD,
  MAX_HOP_ID,
  nextHopId,
  parseHopHostFrame,
  parseHopIsolateFrame,
  parseHopPreface,
} from '../../runtime/isolate/hop-frames';
import { privateDir } from '../helpers/tmp';
import { callOf, expectAnswerArrives, heldBackStream, HOP_TOKEN, hopTokenRow, replyText } from '../helpers/hop';

describe('hop frame heads', () => {
  it('a request head: id, method, target, the headers JSON and the body byte lengths', () => {
    expect(hopRequestHeadOf(7, 'POST', '/api/v2/pod?x=%20', 12, 0)).toBe('7 POST /api/v2/pod?x=%20 12 0\n');
    expect(parseHopHostFrame('7 POST /api/v2/pod?x=%20 12 0')).toEqual({
      kind: 'request',
      id: 7,
      method: 'POST',
      target: '/api/v2/pod?x=%20',
      headersLength: 12,
      bodyLength: 0,
    });
    expect(parseHopHostFrame(`${MAX_HOP_ID} GET / 2 9999999999`)).toEqual({
      kind: 'request',
      id: MAX_HOP_ID,
      method: 'GET',
      target: '/',
      headersLength: 2,
      bodyLength: 9999999999,
    });
    for (const line of [
      '',
      'GET / 2 0',
      '0 GET / 2 0',
      '07 GET / 2 0',
      `${MAX_HOP_ID + 1} GET / 2 0`,
      '1 get / 2 0',
      '1 GET x 2 0',
      '1 GET / 2',
      '1 GET / 02 0',
      '1 GET / 2 0 ',
      '1 GET /a b 2 0',
      '1 GET / -1 0',
      '1 GET / 2 10000000000',
      '1 GET / 2 0\r',
    ])
      expect(parseHopHostFrame(line), line).toBeNull();
  });

  it('a control frame: id and pause, resume or cancel', () => {
    expect(hopControlOf(3, 'pause')).toBe('3 pause\n');
    for (const verb of ['pause', 'resume', 'cancel'] as const)
      expect(parseHopHostFrame(`3 ${verb}`)).toEqual({ kind: 'control', id: 3, verb });
    for (const line of ['3 PAUSE', '3 stop', '0 pause', 'pause', '3 pause ', `${MAX_HOP_ID + 1} cancel`])
      expect(parseHopHostFrame(line), line).toBeNull();
  });

  it('an answer head: id, status, the headers JSON length, the body length or * for chunks', () => {
    expect(hopAnswerHeadOf(4, 200, 30, 5)).toBe('4 200 30 5\n');
    expect(hopAnswerHeadOf(4, 200, 30, '*')).toBe('4 200 30 *\n');
    expect(parseHopIsolateFrame('4 200 30 5')).toEqual({
      kind: 'answer',
      id: 4,
      status: 200,
      headersLength: 30,
      bodyLength: 5,
    });
    expect(parseHopIsolateFrame('4 200 30 *')).toEqual({
      kind: 'answer',
      id: 4,
      status: 200,
      headersLength: 30,
      bodyLength: null,
    });
    expect(parseHopIsolateFrame('1 599 0 0')).toMatchObject({ status: 599, headersLength: 0, bodyLength: 0 });
    for (const line of [
      '',
      '200 30 5',
      '4 200 30',
      '4 600 1 1',
      '4 099 1 1',
      '4 200 1 **',
      '4 200 * 1',
      '4 200 01 1',
      '0 200 1 1',
      `${MAX_HOP_ID + 1} 200 1 1`,
      'HTTP/1.1 200 OK',
    ])
      expect(parseHopIsolateFrame(line), line).toBeNull();
  });

  it("a binding call: the isolate's id, the op, the request id or -, the JSON text's length", () => {
    expect(hopCallHeadOf(9, '/db/all', 'req-0001', 12)).toBe('9 call /db/all req-0001 12\n');
    expect(hopCallHeadOf(9, '/db/all', null, 0)).toBe('9 call /db/all - 0\n');
    expect(hopCallHeadOf(9, '/db/all', undefined, 0)).toBe('9 call /db/all - 0\n');
    // a request id the head cannot carry is left out
    for (const id of ['', 'a b', 'é', 'x'.repeat(201), 'a\nb'])
      expect(hopCallHeadOf(1, '/db/all', id, 1), id).toBe('1 call /db/all - 1\n');
    expect(hopCallHeadOf(1, '/db/all', 'x'.repeat(200), 1)).toBe(`1 call /db/all ${'x'.repeat(200)} 1\n`);
    expect(parseHopIsolateFrame('9 call /db/all req-0001 12')).toEqual({
      kind: 'call',
      id: 9,
      op: '/db/all',
      requestId: 'req-0001',
      length: 12,
    });
    expect(parseHopIsolateFrame(`${MAX_HOP_ID} call /system/exec - 0`)).toEqual({
      kind: 'call',
      id: MAX_HOP_ID,
      op: '/system/exec',
      requestId: undefined,
      length: 0,
    });
    for (const line of [
      '9 call db/all - 1',
      '9 call / - 1',
      '9 call /db/all - 01',
      '9 call /db/all -1',
      '9 CALL /db/all - 1',
      '0 call /db/all - 1',
      `${MAX_HOP_ID + 1} call /db/all - 1`,
      '9 call /db/all - 1 ',
      `9 call /${'a'.repeat(201)} - 1`,
      `9 call /db/all ${'x'.repeat(201)} 1`,
      '9 call /db/all - 10000000000',
    ])
      expect(parseHopIsolateFrame(line), line).toBeNull();
    // the host's side never reads one
    expect(parseHopHostFrame('9 call /db/all - 1')).toBeNull();
  });

  it("a call's result: the call's id, the status, the JSON text's length", () => {
    expect(hopResultHeadOf(9, 200, 5)).toBe('9 result 200 5\n');
    expect(parseHopHostFrame('9 result 200 5')).toEqual({ kind: 'result', id: 9, status: 200, length: 5 });
    expect(parseHopHostFrame(`${MAX_HOP_ID} result 599 0`)).toEqual({
      kind: 'result',
      id: MAX_HOP_ID,
      status: 599,
      length: 0,
    });
    for (const line of ['9 result 600 5', '9 result 200', '9 result 200 05', '0 result 200 5', '9 RESULT 200 5'])
      expect(parseHopHostFrame(line), line).toBeNull();
    expect(parseHopIsolateFrame('9 result 200 5')).toBeNull();
  });

  it('the next id: counts up past the ids taken, and starts over at 1 after the largest', () => {
    const none = () => false;
    expect(nextHopId(0, none)).toBe(1);
    expect(nextHopId(5, (id) => id === 6 || id === 7)).toBe(8);
    expect(nextHopId(MAX_HOP_ID - 1, none)).toBe(MAX_HOP_ID);
    expect(nextHopId(MAX_HOP_ID, none)).toBe(1);
    expect(nextHopId(MAX_HOP_ID - 1, (id) => id === MAX_HOP_ID || id === 1)).toBe(2);
  });

  it("the isolate's preface carries the binding secret", () => {
    expect(hopPrefaceOf('abc')).toBe('secret abc\n');
    expect(parseHopPreface('secret abc')).toBe('abc');
    expect(parseHopPreface(`secret ${'k'.repeat(200)}`)).toBe('k'.repeat(200));
    for (const line of ['secret ', 'secret a b', 'secretabc', 'Secret abc', `secret ${'k'.repeat(201)}`, ' secret a'])
      expect(parseHopPreface(line), line).toBeNull();
  });

  it('a chunk head is its id and length; 0 ends', () => {
    expect(hopChunkHeadOf(2, 17)).toBe('2 17\n');
    expect(parseHopIsolateFrame('2 17')).toEqual({ kind: 'chunk', id: 2, length: 17 });
    expect(parseHopIsolateFrame('2 0')).toEqual({ kind: 'chunk', id: 2, length: 0 });
    for (const line of ['17', '2 -1', '2 017', '2 1 ', '2 a', '2 10000000000', '0 1'])
      expect(parseHopIsolateFrame(line), line).toBeNull();
  });
});

type Seen = { id: number; method: string; target: string; headers: Record<string, string | string[]>; body: string };
/** How the fake isolate answers a request on its connection (raw frames). */
type Answer = (seen: Seen, conn: net.Socket) => void;

const socketPath = join(privateDir('ballast-framed-hop'), 'isolate.sock');
const SECRET = 'k'.repeat(43);
/** what the fake isolate sends first on a connection */
let preface = hopPrefaceOf(SECRET);
/** the results of binding calls the host sent back, as `<id> <status> <text>` */
const results: string[] = [];
let onResult: (id: number, status: number, body: string, conn: net.Socket) => void = () => undefined;
const seen: Seen[] = [];
/** the control frames the host sent, as `<id> <verb>` */
const controls: string[] = [];
let onControl: (id: number, verb: string, conn: net.Socket) => void = () => undefined;
const connections: net.Socket[] = [];
/** how many reads each connection took (its index in `connections`) */
const reads: number[] = [];
const json = (headers: Record<string, string>) => JSON.stringify(headers);
/** a whole answer to request `id` as one frame */
const frame = (id: number, status: number, headers: Record<string, string>, body = '') =>
  hopAnswerHeadOf(id, status, Buffer.byteLength(json(headers)), Buffer.byteLength(body)) + json(headers) + body;
const defaultAnswer: Answer = (s, conn) => conn.write(frame(s.id, 200, { 'content-type': 'application/json' }, '{}'));
let answer: Answer = defaultAnswer;
let server: net.Server;
/** an event stream's head for request `id` */
const streamHead = (id: number) => {
  const h = json({ 'content-type': 'text/event-stream' });
  return hopAnswerHeadOf(id, 200, Buffer.byteLength(h), '*') + h;
};
const closedOf = (c: net.Socket) => new Promise<void>((r) => (c.closed ? r() : c.once('close', () => r())));

beforeAll(async () => {
  server = net.createServer((conn) => {
    const index = connections.push(conn) - 1;
    reads[index] = 0;
    if (preface) conn.write(preface);
    let buf = Buffer.alloc(0);
    conn.on('error', () => undefined);
    conn.on('data', (c: Buffer) => {
      reads[index]++;
      buf = Buffer.concat([buf, c]);
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const f = parseHopHostFrame(buf.toString('latin1', 0, nl));
        if (!f) throw new Error(`bad frame: ${buf.toString('latin1', 0, nl)}`);
        if (f.kind === 'control') {
          buf = buf.subarray(nl + 1);
          controls.push(`${f.id} ${f.verb}`);
          onControl(f.id, f.verb, conn);
          continue;
        }
        if (f.kind === 'result') {
          if (buf.length < nl + 1 + f.length) return;
          const text = buf.toString('utf8', nl + 1, nl + 1 + f.length);
          buf = buf.subarray(nl + 1 + f.length);
          results.push(`${f.id} ${f.status} ${text}`);
          onResult(f.id, f.status, text, conn);
          continue;
        }
        const end = nl + 1 + f.headersLength + f.bodyLength;
        if (buf.length < end) return;
        const s: Seen = {
          id: f.id,
          method: f.method,
          target: f.target,
          headers: JSON.parse(buf.toString('utf8', nl + 1, nl + 1 + f.headersLength)) as Seen['headers'],
          body: buf.toString('utf8', nl + 1 + f.headersLength, end),
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

/** The host's side of the calls: records each, answers as `behave` says (the socket's `answer`). */
const asked: { op: string; body: string; requestId: string | undefined }[] = [];
let behave: HopCalls['answer'] = async (op, body) => ({ status: 200, body: JSON.stringify({ op, body }) });
const CALL_LIMIT = 64;
const hopCalls: HopCalls = {
  authorised: secretCheck(SECRET),
  answer: (op, body, requestId) => {
    asked.push({ op, body, requestId });
    return behave(op, body, requestId);
  },
  limit: CALL_LIMIT,
};

describe('the framed hop to the isolate', () => {
  let fwd: ReturnType<typeof framedForwarder>;
  beforeAll(() => {
    fwd = framedForwarder(socketPath, { secret: 'hop-secret', tokens }, hopCalls);
  });
  afterAll(() => fwd.close());
  afterEach(() => {
    seen.length = 0;
    controls.length = 0;
    onControl = () => undefined;
    answer = defaultAnswer;
    preface = hopPrefaceOf(SECRET);
    results.length = 0;
    onResult = () => undefined;
    asked.length = 0;
    behave = async (op, body) => ({ status: 200, body: JSON.stringify({ op, body }) });
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
    answer = (s, conn) =>
      conn.write(
        frame(
          s.id,
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
      conn.write(frame(s.id, s.target.endsWith('204') ? 204 : s.target.endsWith('304') ? 304 : 200, {}, ''));
    expect((await fwd.handle(await callOf('http://h/x', { method: 'HEAD' }))).body).toBeNull();
    expect((await fwd.handle(await callOf('http://h/204'))).body).toBeNull();
    expect((await fwd.handle(await callOf('http://h/304'))).body).toBeNull();
    const empty = await fwd.handle(await callOf('http://h/200'));
    expect(empty.body).toEqual(new Uint8Array(0));
  });

  it('an event stream comes piece by piece, a split UTF-8 character whole, and ends with its last chunk', async () => {
    let more!: () => void;
    const gotFirst = new Promise<void>((r) => (more = r));
    answer = (s, conn) => {
      conn.write(streamHead(s.id));
      conn.write(hopChunkHeadOf(s.id, 7) + 'data: 1');
      void gotFirst.then(() => {
        const e = Buffer.from('\n\ndata: é\n\n');
        const cut = e.indexOf(0xc3) + 1;
        conn.write(Buffer.concat([Buffer.from(hopChunkHeadOf(s.id, cut)), e.subarray(0, cut)]));
        conn.write(Buffer.concat([Buffer.from(hopChunkHeadOf(s.id, e.length - cut)), e.subarray(cut)]));
        conn.write(hopChunkHeadOf(s.id, 0));
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
    expect(controls).toEqual([]);
  });

  it('the client going away cancels its stream; what the isolate sent meanwhile is dropped, the connection kept', async () => {
    let stream!: Seen;
    answer = (s, conn) => {
      stream = s;
      conn.write(streamHead(s.id) + hopChunkHeadOf(s.id, 6) + 'data:1');
    };
    const cancelled = new Promise<net.Socket>((r) => (onControl = (_id, verb, conn) => verb === 'cancel' && r(conn)));
    const r = await fwd.handle(await callOf('http://h/api/v2/jobs/j1/events'));
    for await (const p of r.chunks!) {
      expect(p).toBe('data:1');
      break;
    }
    const conn = await cancelled;
    expect(controls).toEqual([`${stream.id} cancel`]);
    // what was under way still comes, then the stream's end: dropped, and the next call is answered
    conn.write(hopChunkHeadOf(stream.id, 6) + 'data:2' + hopChunkHeadOf(stream.id, 0));
    answer = defaultAnswer;
    expect(await text(await fwd.handle(await callOf('http://h/api/v2/x')))).toBe('{}');
    expect(conn.destroyed).toBe(false);
  });

  it('an answer cut short, or not framed, is an error; the next call gets a new connection', async () => {
    const first = connections.length;
    answer = (s, conn) => {
      conn.write(hopAnswerHeadOf(s.id, 200, 2, 10) + '{}' + 'abc');
      conn.destroy();
    };
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/closed the connection/);
    answer = (_s, conn) => conn.write('HTTP/1.1 200 OK\r\n\r\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not a frame head/);
    answer = (s, conn) => conn.write(hopAnswerHeadOf(s.id, 200, 5, 0) + 'nope!');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/headers that are not JSON/);
    answer = (s, conn) =>
      conn.write(hopAnswerHeadOf(s.id, 200, 2, '*') + '{}' + hopChunkHeadOf(s.id, 2) + 'ab' + 'x\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not a frame head: "x"/);
    answer = (_s, conn) => conn.write('2'.repeat(MAX_HOP_HEAD + 1));
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/head line too long/);
    answer = (s, conn) => conn.write(frame(s.id, 200, {}, '{}') + frame(s.id, 200, {}, '{}'));
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('{}');
    answer = (s, conn) => conn.write(hopChunkHeadOf(s.id, 2) + 'ab');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/a chunk before its answer's head/);
    answer = defaultAnswer;
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('{}');
    // each broken connection was given up: seven connections for eight calls
    expect(connections.length - first).toBe(7);
  });

  it('an answer in chunks that is not an event stream is one body, whole at its end', async () => {
    answer = (s, conn) => {
      const h = json({ 'content-type': 'application/json' });
      conn.write(hopAnswerHeadOf(s.id, 200, Buffer.byteLength(h), '*') + h + hopChunkHeadOf(s.id, 3) + '[1,');
      setTimeout(() => conn.write(hopChunkHeadOf(s.id, 2) + '2]' + hopChunkHeadOf(s.id, 0)), 20);
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/fs/explore'));
    expect(r.chunks).toBeUndefined();
    expect(Buffer.from(r.body as Uint8Array).toString()).toBe('[1,2]');
    expect(r.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('a head: an empty line is none, the longest is waited for, and it may come in pieces', async () => {
    answer = (_s, conn) => conn.write('\n');
    await expect(fwd.handle(await callOf('http://h/x'))).rejects.toThrow(/not a frame head/);
    answer = (_s, conn) => {
      conn.write('2'.repeat(MAX_HOP_HEAD));
      setTimeout(() => conn.write('\n'), 20);
    };
    const e = await fwd.handle(await callOf('http://h/x')).then(
      () => null,
      (x: Error) => x.message,
    );
    // not "too long", and the head is quoted only in part
    expect(e).toMatch(/^the isolate's answer: not a frame head: "2{80}"$/);
    answer = (s, conn) => {
      const whole = frame(s.id, 200, { 'content-type': 'application/json' }, '"slow"');
      conn.write(whole.slice(0, 2));
      setTimeout(() => conn.write(whole.slice(2, 5)), 10);
      setTimeout(() => conn.write(whole.slice(5)), 20);
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('"slow"');
  });

  it('while nobody reads an event stream, the isolate is told to pause; resumed, everything arrives', async () => {
    const big = heldBackStream();
    let paused = false;
    let resumed: (() => void) | undefined;
    answer = (s, conn) => {
      onControl = (id, verb) => {
        if (id !== s.id) return;
        paused = verb === 'pause';
        if (verb === 'resume') {
          const r = resumed;
          resumed = undefined;
          r?.();
        }
      };
      conn.write(streamHead(s.id));
      // as the entry does: no piece while paused, and the socket's own backpressure
      big.run(
        (piece) => conn.write(hopChunkHeadOf(s.id, piece.length) + piece) && !paused,
        (more) => {
          if (paused) resumed = more;
          else conn.once('drain', () => (paused ? (resumed = more) : more()));
        },
        () => conn.write(hopChunkHeadOf(s.id, 0)),
      );
    };
    const r = await big.readAfterStall(await fwd.handle(await callOf('http://h/api/v2/jobs/j/events')));
    expect(r.atStall).toBeLessThan(big.total);
    expect([r.atEnd, r.read]).toEqual([big.total, big.total * big.piece.length]);
    expect(controls.filter((c) => c.endsWith('pause')).length).toBeGreaterThan(0);
    expect(controls.filter((c) => c.endsWith('resume')).length).toBeGreaterThan(0);
  });

  it('a stream cut short fails its reader', async () => {
    answer = (s, conn) => {
      conn.write(streamHead(s.id) + hopChunkHeadOf(s.id, 6) + 'data:1');
      setTimeout(() => conn.destroy(), 20);
    };
    const r = await fwd.handle(await callOf('http://h/api/v2/jobs/j1/events'));
    await expect(text(r)).rejects.toThrow(/closed the connection/);
  });

  it('a frame for no request drops the connection; the next call gets a new one', async () => {
    let used: net.Socket | undefined;
    answer = (s, conn) => {
      used = conn;
      conn.write(frame(s.id, 200, {}, '{}') + frame(s.id + 1000, 200, {}, '{}'));
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('{}');
    const first = used!;
    await closedOf(first);
    answer = (s, conn) => {
      used = conn;
      conn.write(frame(s.id, 200, {}, '"again"'));
    };
    expect(await text(await fwd.handle(await callOf('http://h/x')))).toBe('"again"');
    expect(used).not.toBe(first);
  });

  it('a turn writes its frames every HOP_FLUSH_FRAMES, and the rest at its end', async () => {
    const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
    const writes = vi.spyOn(net.Socket.prototype, 'write');
    try {
      await own.handle(await callOf('http://h/warm'));
      const calls = await Promise.all(
        Array.from({ length: 2 * HOP_FLUSH_FRAMES + 3 }, (_, i) => callOf(`http://h/f${i}`)),
      );
      writes.mockClear();
      const replies = calls.map((c) => own.handle(c));
      // in this same turn: two writes of HOP_FLUSH_FRAMES requests each
      const heads = (n: number) => String(writes.mock.calls[n][0]).match(/\d+ GET \/f\d+ \d+ 0\n/g);
      expect(writes.mock.calls).toHaveLength(2);
      expect(heads(0)).toHaveLength(HOP_FLUSH_FRAMES);
      expect(heads(1)).toHaveLength(HOP_FLUSH_FRAMES);
      await Promise.all(replies);
      // the last three at the turn's end, before any answer came back
      expect(heads(2)).toHaveLength(3);
      // a turn of exactly HOP_FLUSH_FRAMES: one write, and nothing (not even an empty write) at its end
      const more = await Promise.all(Array.from({ length: HOP_FLUSH_FRAMES }, (_, i) => callOf(`http://h/f${i}`)));
      writes.mockClear();
      await Promise.all(more.map((c) => own.handle(c)));
      expect(writes.mock.calls.filter((c) => /GET|^$/.test(String(c[0])))).toHaveLength(1);
    } finally {
      writes.mockRestore();
      own.close();
    }
  });

  it("one connection for every call in flight: a turn's requests in a few writes, answers in any order", async () => {
    const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
    try {
      const first = connections.length;
      const held: Seen[] = [];
      answer = (s) => held.push(s);
      const calls = await Promise.all(Array.from({ length: 70 }, (_, i) => callOf(`http://h/c${i}`)));
      const replies = calls.map((c) => own.handle(c));
      while (held.length < 70) await new Promise((r) => setTimeout(r, 5));
      expect(connections.length - first).toBe(1);
      // asked in one turn: a write every HOP_FLUSH_FRAMES requests and one for the rest, distinct ids
      expect(reads[first]).toBeLessThanOrEqual(Math.ceil(70 / HOP_FLUSH_FRAMES));
      expect(new Set(held.map((s) => s.id)).size).toBe(70);
      // answered last first, in one write
      const conn = connections[first];
      conn.write(
        held
          .slice()
          .reverse()
          .map((s) => frame(s.id, 200, {}, JSON.stringify(s.target)))
          .join(''),
      );
      const bodies = await Promise.all(replies.map(async (r) => text(await r)));
      expect(bodies).toEqual(calls.map((c) => JSON.stringify(c.url.pathname)));
      answer = defaultAnswer;
      await own.handle(await callOf('http://h/again'));
      expect(connections.length - first).toBe(1);
    } finally {
      own.close();
    }
  });

  it('a connection that ends fails every exchange on it; the next call gets a new one', async () => {
    const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
    try {
      const first = connections.length;
      const held: Seen[] = [];
      answer = (s) => held.push(s);
      const two = await Promise.all(['a', 'b'].map((p) => callOf(`http://h/${p}`)));
      const replies = two.map((c) =>
        own.handle(c).then(
          () => 'answered',
          (e: Error) => e.message,
        ),
      );
      while (held.length < 2) await new Promise((r) => setTimeout(r, 5));
      connections[first].destroy();
      expect(await Promise.all(replies)).toEqual([
        'the isolate closed the connection before its answer was complete',
        'the isolate closed the connection before its answer was complete',
      ]);
      answer = defaultAnswer;
      expect(await text(await own.handle(await callOf('http://h/c')))).toBe('{}');
      expect(connections.length - first).toBe(2);
    } finally {
      own.close();
    }
  });

  it('closed: its connection ends, and a call is refused', async () => {
    const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
    const before = connections.length;
    await own.handle(await callOf('http://h/a'));
    const conn = connections[before];
    own.close();
    await closedOf(conn);
    await expect(own.handle(await callOf('http://h/b'))).rejects.toThrow('the hop to the isolate is closed');
  });

  it("the isolate's binding calls run by `answer`; each result goes back by the call's id", async () => {
    const text1 = '{"sql":"SELECT \'é\'"}';
    answer = (s, conn) => {
      onResult = () => {
        // both results in: the request's answer carries them
        if (results.length === 2) conn.write(frame(s.id, 200, {}, JSON.stringify(results)));
      };
      conn.write(
        hopCallHeadOf(5, '/db/all', 'rid-1', Buffer.byteLength(text1)) +
          text1 +
          hopCallHeadOf(6, '/events/send', null, 2) +
          '{}',
      );
    };
    const got = JSON.parse(await text(await fwd.handle(await callOf('http://h/api/v2/x')))) as string[];
    expect(asked).toEqual([
      { op: '/db/all', body: text1, requestId: 'rid-1' },
      { op: '/events/send', body: '{}', requestId: undefined },
    ]);
    expect(got).toEqual([
      `5 200 ${JSON.stringify({ op: '/db/all', body: text1 })}`,
      `6 200 ${JSON.stringify({ op: '/events/send', body: '{}' })}`,
    ]);
  });

  it('a result goes out when its op is done, whatever the order the calls came in', async () => {
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    behave = async (op) => {
      if (op === '/system/slow') await slow;
      return { status: op === '/system/slow' ? 504 : 200, body: JSON.stringify(op) };
    };
    answer = (s, conn) => {
      onResult = () => {
        if (results.length === 1) release();
        if (results.length === 2) conn.write(frame(s.id, 200, {}, JSON.stringify(results)));
      };
      conn.write(hopCallHeadOf(1, '/system/slow', null, 2) + '{}' + hopCallHeadOf(2, '/db/first', null, 2) + '{}');
    };
    expect(JSON.parse(await text(await fwd.handle(await callOf('http://h/api/v2/x'))))).toEqual([
      '2 200 "/db/first"',
      '1 504 "/system/slow"',
    ]);
  });

  it('a frame larger than a read comes whole, its pieces joined once (not at every read)', async () => {
    const big = 'é'.repeat(1024 * 1024); // 2 MiB of UTF-8
    behave = async (op, body) => ({ status: 200, body: JSON.stringify([op, body.length, body === big]) });
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      answer = (s, conn) => {
        onResult = () => conn.write(frame(s.id, 200, {}, JSON.stringify(results)));
        const bytes = Buffer.from(hopCallHeadOf(3, '/system/file/write', null, Buffer.byteLength(big)) + big);
        // 32 pieces a few ms apart: one read each
        let at = 0;
        const next = () => {
          conn.write(bytes.subarray(at, at + 65536));
          at += 65536;
          if (at < bytes.length) setTimeout(next, 2);
        };
        next();
      };
      const own = framedForwarder(socketPath, { secret: 's' }, { ...hopCalls, limit: 64 * 1024 * 1024 });
      try {
        expect(JSON.parse(await text(await own.handle(await callOf('http://h/api/v2/x'))))).toEqual([
          `3 200 ${JSON.stringify(['/system/file/write', big.length, true])}`,
        ]);
      } finally {
        own.close();
      }
      const joins = concat.mock.calls.map((c) => c[0] as Buffer[]);
      // one join of the frame's pieces, and never a large buffer joined again with the next read
      expect(joins.filter((parts) => parts.length > 8)).toHaveLength(1);
      expect(joins.filter((parts) => parts.length === 2 && parts[0].length >= 65536)).toEqual([]);
    } finally {
      concat.mockRestore();
    }
  });

  it('a call over the limit is 413 and does not run; its bytes are read past, the next call is read', async () => {
    const over = 'x'.repeat(CALL_LIMIT + 1);
    const at = `"${'y'.repeat(CALL_LIMIT - 2)}"`;
    answer = (s, conn) => {
      onResult = () => {
        if (results.length === 2) conn.write(frame(s.id, 200, {}, JSON.stringify(results)));
      };
      // the oversized text in pieces, its last byte with the next call's head
      conn.write(hopCallHeadOf(7, '/db/all', null, over.length) + over.slice(0, 10));
      setTimeout(() => conn.write(over.slice(10, -1)), 10);
      setTimeout(() => conn.write(over.slice(-1) + hopCallHeadOf(8, '/db/all', null, at.length) + at), 20);
    };
    const got = JSON.parse(await text(await fwd.handle(await callOf('http://h/api/v2/x')))) as string[];
    expect(got).toEqual([
      `7 413 ${JSON.stringify({ error: { code: 'payload_too_large', message: `binding payload exceeds ${CALL_LIMIT} bytes` } })}`,
      `8 200 ${JSON.stringify({ op: '/db/all', body: at })}`,
    ]);
    expect(asked).toEqual([{ op: '/db/all', body: at, requestId: undefined }]);
  });

  it('without the preface, or with a wrong secret, the connection is dropped: nothing runs, its exchanges fail', async () => {
    for (const wrong of [
      hopPrefaceOf(`${SECRET.slice(0, -1)}j`),
      hopPrefaceOf(SECRET.slice(0, -1)),
      hopPrefaceOf(`${SECRET}k`),
      `secret  ${SECRET}\n`,
      '',
    ]) {
      preface = wrong;
      answer = (s, conn) => conn.write(hopCallHeadOf(1, '/db/all', null, 2) + '{}' + frame(s.id, 200, {}, '{}'));
      // a new connection: the preface is its first line
      const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
      try {
        await expect(own.handle(await callOf('http://h/x')), wrong).rejects.toThrow(
          "the isolate's answer: no preface with the binding secret",
        );
      } finally {
        own.close();
      }
    }
    expect(asked).toEqual([]);
    expect(results).toEqual([]);
    preface = hopPrefaceOf(SECRET);
    answer = defaultAnswer;
    const own = framedForwarder(socketPath, { secret: 's' }, hopCalls);
    expect(await text(await own.handle(await callOf('http://h/x')))).toBe('{}');
    own.close();
  });

  it('fetch: a WHATWG request through the same hop', async () => {
    answer = (s, conn) =>
      conn.write(frame(s.id, 200, { 'content-type': 'application/json' }, JSON.stringify(s.target)));
    const res = await fwd.fetch(new Request('http://h/api/v2/x?q=1'));
    expect([res.status, await res.text()]).toEqual([200, '"/api/v2/x?q=1"']);
  });
});
