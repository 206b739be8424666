/**
 * The binding socket's framed connections (runtime/bindings/frames.ts, framed.ts;
 * docs/bindings-protocol.md), against a BindingServer that records its calls: the preface's
 * secret, requests one at a time and in order, a head or payload that cannot be trusted closing
 * the connection, idleness, and HTTP/1.1 still served on the same socket.
 */
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BindingServer } from '../../runtime/binding-server';
import {
  BINDING_BODY_LIMIT,
  BINDING_SECRET_HEADER,
  startBindingSocket,
  type BindingSocket,
} from '../../runtime/bindings/socket';
import {
  answerHeadOf,
  MAX_FRAME_HEAD,
  parseAnswerHead,
  parseRequestHead,
  prefaceOf,
  requestHeadOf,
} from '../../runtime/bindings/frames';
import { connectFramed, type FramedTestClient } from '../helpers/framed-client';
import { privateDir } from '../helpers/tmp';

const SECRET = 's'.repeat(43);

describe('frame heads', () => {
  it('a request head carries the op, the request id or -, and the byte length', () => {
    expect(requestHeadOf('/db/all', 'req-0001', 12)).toBe('/db/all req-0001 12\n');
    expect(requestHeadOf('/db/all', null, 0)).toBe('/db/all - 0\n');
    // an id the head cannot carry as it is is left out, not mangled
    for (const id of ['', 'a b', 'né', '-', 'x'.repeat(201)])
      expect(requestHeadOf('/db/all', id, 1)).toBe('/db/all - 1\n');
    expect(requestHeadOf('/db/all', 'x'.repeat(200), 1)).toBe(`/db/all ${'x'.repeat(200)} 1\n`);
    expect(parseRequestHead('/system/exec req-0001 42')).toEqual({
      op: '/system/exec',
      requestId: 'req-0001',
      length: 42,
    });
    expect(parseRequestHead('/db/all - 0')).toEqual({ op: '/db/all', requestId: undefined, length: 0 });
    expect(parseRequestHead('/db/all - 9999999999')).toEqual({
      op: '/db/all',
      requestId: undefined,
      length: 9999999999,
    });
  });

  it('anything else is no request head', () => {
    for (const line of [
      '',
      'db/all - 1',
      '/db/all - 01',
      '/db/all - -1',
      '/db/all - 1 ',
      '/db/all  - 1',
      '/db/all - 10000000000',
      '/db/all -',
      '/db/all - 1\r',
      'POST /db/all HTTP/1.1',
    ])
      expect(parseRequestHead(line), line).toBeNull();
  });

  it('an answer head is a status and a byte length', () => {
    expect(answerHeadOf(200, 5)).toBe('200 5\n');
    expect(parseAnswerHead('200 5')).toEqual({ status: 200, length: 5 });
    expect(parseAnswerHead('599 0')).toEqual({ status: 599, length: 0 });
    expect(parseAnswerHead('100 0')).toEqual({ status: 100, length: 0 });
    for (const line of ['', '200', '200 ', '600 1', '099 1', '20 1', '200 01', '200 -1', 'x200 1', 'HTTP/1.1 200 OK'])
      expect(parseAnswerHead(line), line).toBeNull();
  });

  it('the preface is NUL, the secret, a newline', () => {
    expect(prefaceOf('abc')).toBe('\0abc\n');
  });
});

describe('framed connections on the binding socket', () => {
  const dir = privateDir('framed');
  let socket: BindingSocket;
  const calls: { op: string; body: string; requestId: string | undefined }[] = [];
  const logged: string[] = [];
  /** how the fake answers: by default it echoes */
  let behave: (op: string, body: string) => Promise<{ status: number; body: string }> = async (op, body) => ({
    status: 200,
    body: JSON.stringify({ op, body }),
  });
  const bindings = {
    call: (op: string, body: string, requestId: string | undefined) => {
      calls.push({ op, body, requestId });
      return behave(op, body);
    },
  } as unknown as BindingServer;
  const clients: FramedTestClient[] = [];
  const connect = async (secret?: string) => {
    const c = await connectFramed(socket.path, secret);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    socket = await startBindingSocket({
      bindings,
      path: join(dir, 'bindings.sock'),
      secret: SECRET,
      idleTimeoutMs: 300,
      log: (l) => logged.push(l),
    });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.socket.destroy();
    calls.length = 0;
    logged.length = 0;
    behave = async (op, body) => ({ status: 200, body: JSON.stringify({ op, body }) });
  });
  afterAll(() => socket.close());

  it('answers each request with its op, JSON text and request id, on one connection', async () => {
    const c = await connect(SECRET);
    c.request('/db/all', '{"sql":"SELECT 1","name":"née"}', 'req-0001');
    expect(await c.answer()).toEqual({
      status: 200,
      body: JSON.stringify({ op: '/db/all', body: '{"sql":"SELECT 1","name":"née"}' }),
    });
    c.request('/events/send', '{}');
    expect((await c.answer()).status).toBe(200);
    expect(calls).toEqual([
      { op: '/db/all', body: '{"sql":"SELECT 1","name":"née"}', requestId: 'req-0001' },
      { op: '/events/send', body: '{}', requestId: undefined },
    ]);
  });

  it('a wrong secret is 401 and the end of the connection; nothing runs', async () => {
    for (const wrong of [`${SECRET.slice(0, -1)}t`, SECRET.slice(0, -1), `${SECRET}s`, '']) {
      const c = await connect(wrong);
      c.request('/db/all', '{}');
      const a = await c.answer();
      expect(a.status).toBe(401);
      expect(JSON.parse(a.body)).toEqual({
        error: { code: 'unauthorized', message: 'missing or wrong binding secret' },
      });
      await c.closed;
    }
    expect(calls).toEqual([]);
  });

  it('bytes that arrive one at a time make the same requests', async () => {
    const c = await connect();
    const text = `${prefaceOf(SECRET)}${requestHeadOf('/system/exec', 'r-1', Buffer.byteLength('{"a":"é"}'))}{"a":"é"}`;
    for (const b of Buffer.from(text)) {
      c.send(Buffer.from([b]));
      await new Promise((r) => setImmediate(r));
    }
    expect(await c.answer()).toEqual({ status: 200, body: JSON.stringify({ op: '/system/exec', body: '{"a":"é"}' }) });
    expect(calls).toEqual([{ op: '/system/exec', body: '{"a":"é"}', requestId: 'r-1' }]);
  });

  it('requests sent together are run one at a time and answered in order', async () => {
    let running = 0;
    let most = 0;
    const delays: Record<string, number> = { '/db/first': 60, '/db/second': 0, '/db/third': 20 };
    behave = async (op) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, delays[op]));
      running--;
      return { status: 200, body: JSON.stringify(op) };
    };
    const c = await connect();
    c.send(
      prefaceOf(SECRET) +
        requestHeadOf('/db/first', null, 2) +
        '{}' +
        requestHeadOf('/db/second', null, 2) +
        '[]' +
        requestHeadOf('/db/third', null, 4) +
        'null',
    );
    const got = [await c.answer(), await c.answer(), await c.answer()];
    expect(got.map((a) => a.body)).toEqual(['"/db/first"', '"/db/second"', '"/db/third"']);
    expect(calls.map((x) => x.body)).toEqual(['{}', '[]', 'null']);
    expect(most).toBe(1);
  });

  it('an unknown op is 404 and a failed one 500 (logged); the connection goes on', async () => {
    behave = (op) =>
      op === '/db/boom' ? Promise.reject(new Error('exploded')) : Promise.resolve({ status: 200, body: 'null' });
    const c = await connect(SECRET);
    c.request('/nope/x', '{}');
    const unknown = await c.answer();
    expect([unknown.status, JSON.parse(unknown.body)]).toEqual([
      404,
      { error: { code: 'not_found', message: 'unknown binding operation /nope/x' } },
    ]);
    c.request('/db/boom', '{}');
    const failed = await c.answer();
    expect([failed.status, JSON.parse(failed.body)]).toEqual([
      500,
      { error: { code: 'internal', message: 'binding /db/boom failed' } },
    ]);
    expect(logged.join('\n')).toContain('binding /db/boom failed: Error: exploded');
    c.request('/tokens/touch', '{}');
    expect(await c.answer()).toEqual({ status: 200, body: 'null' });
    expect(calls.map((x) => x.op)).toEqual(['/db/boom', '/tokens/touch']);
  });

  it('a malformed head is 400 and the end of the connection: nothing sent after it runs', async () => {
    const c = await connect(SECRET);
    c.send('POST /db/all HTTP/1.1\n');
    const a = await c.answer();
    expect([a.status, JSON.parse(a.body).error]).toEqual([
      400,
      { code: 'bad_request', message: 'malformed binding frame head' },
    ]);
    // the host only half-closed: a well-formed request written now is still not run
    c.request('/db/all', '{}');
    await c.closed;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toEqual([]);
    // an empty head line is no head either
    const d = await connect(SECRET);
    d.send('\n');
    expect((await d.answer()).status).toBe(400);
    await d.closed;
  });

  it("a text split over writes, its rest arriving with the next request's head: each gets its own", async () => {
    const c = await connect(SECRET);
    c.send(`${requestHeadOf('/db/one', null, 12)}{"a":"`);
    await new Promise((r) => setTimeout(r, 20));
    c.send(`long"}${requestHeadOf('/db/two', null, 2)}[]`);
    expect((await c.answer()).status).toBe(200);
    expect((await c.answer()).status).toBe(200);
    expect(calls.map((x) => [x.op, x.body])).toEqual([
      ['/db/one', '{"a":"long"}'],
      ['/db/two', '[]'],
    ]);
  });

  it('a head longer than it may be is refused before its newline arrives', async () => {
    const c = await connect(SECRET);
    c.send(`/db/all ${'x'.repeat(MAX_FRAME_HEAD)}`);
    const a = await c.answer();
    expect([a.status, JSON.parse(a.body).error]).toEqual([
      400,
      { code: 'bad_request', message: 'binding frame head too long' },
    ]);
    await c.closed;
    // exactly the longest head is still waited for
    const d = await connect(SECRET);
    const head = `/db/all ${'x'.repeat(200)} 2`;
    d.send(`${head}${' '.repeat(MAX_FRAME_HEAD - head.length)}`);
    await new Promise((r) => setTimeout(r, 50));
    expect(d.socket.destroyed || d.socket.readableEnded).toBe(false);
  });

  it('a payload over the limit is 413 before it is read, and the end of the connection', async () => {
    const c = await connect(SECRET);
    c.send(requestHeadOf('/db/all', null, BINDING_BODY_LIMIT + 1));
    const a = await c.answer();
    expect([a.status, JSON.parse(a.body)]).toEqual([
      413,
      { error: { code: 'payload_too_large', message: `binding payload exceeds ${BINDING_BODY_LIMIT} bytes` } },
    ]);
    await c.closed;
    // the limit itself is allowed: the host waits for the text
    const d = await connect(SECRET);
    d.send(requestHeadOf('/db/all', null, BINDING_BODY_LIMIT));
    await new Promise((r) => setTimeout(r, 50));
    expect(d.socket.readableEnded).toBe(false);
    expect(calls).toEqual([]);
  });

  it('an idle connection is closed, but not while its request runs', async () => {
    behave = async () => {
      await new Promise((r) => setTimeout(r, 700));
      return { status: 200, body: '"slow"' };
    };
    const c = await connect(SECRET);
    c.request('/system/exec', '{}');
    expect(await c.answer()).toEqual({ status: 200, body: '"slow"' });
    const t0 = performance.now();
    await c.closed;
    expect(performance.now() - t0).toBeGreaterThan(200);
    // one that never says anything, too
    const silent = await connect();
    await silent.closed;
  });

  it('a connection in use is not idle: requests closer together than the idle time go on', async () => {
    behave = async () => ({ status: 200, body: 'null' });
    const c = await connect(SECRET);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 150));
      c.request('/db/all', '{}');
      expect(await c.answer()).toEqual({ status: 200, body: 'null' });
    }
    expect(c.socket.destroyed).toBe(false);
  });

  /** one HTTP request with the secret: status, content type and text */
  const fetchOver = (path: string, body: string | Buffer) =>
    new Promise<{ status: number; type: string; body: string }>((done, fail) => {
      const r = http.request(
        {
          socketPath: socket.path,
          method: 'POST',
          path,
          headers: { [BINDING_SECRET_HEADER]: SECRET, 'content-length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          let t = '';
          res.on('data', (c: Buffer) => (t += c));
          res.on('end', () =>
            done({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: t }),
          );
        },
      );
      r.on('error', fail);
      r.end(body);
    });

  it('HTTP/1.1 is still served on the same socket, from its first byte', async () => {
    const ask = (write: (r: http.ClientRequest) => void) =>
      new Promise<[number, string]>((done, fail) => {
        const r = http.request(
          {
            socketPath: socket.path,
            method: 'POST',
            path: '/db/all',
            headers: { [BINDING_SECRET_HEADER]: SECRET, 'content-length': '2', 'x-request-id': 'http-1' },
          },
          (res) => {
            let t = '';
            res.on('data', (c: Buffer) => (t += c));
            res.on('end', () => done([res.statusCode ?? 0, t]));
          },
        );
        r.on('error', fail);
        write(r);
      });
    expect(await ask((r) => r.end('{}'))).toEqual([200, JSON.stringify({ op: '/db/all', body: '{}' })]);
    expect(calls).toEqual([{ op: '/db/all', body: '{}', requestId: 'http-1' }]);
    // a query is not part of the op; the answer is JSON
    const res = await fetchOver('/db/all?x=1', '{}');
    expect([res.status, res.type, JSON.parse(res.body).op]).toEqual([200, 'application/json', '/db/all']);
    // a payload over the limit: 413, and the op does not run; one at the limit runs
    calls.length = 0;
    const big = await fetchOver('/db/all', Buffer.alloc(BINDING_BODY_LIMIT + 1, 32));
    expect([big.status, big.type, JSON.parse(big.body).error]).toEqual([
      413,
      'application/json',
      { code: 'payload_too_large', message: `binding payload exceeds ${BINDING_BODY_LIMIT} bytes` },
    ]);
    expect(calls).toEqual([]);
    behave = async () => ({ status: 200, body: '"whole"' });
    expect((await fetchOver('/db/all', Buffer.alloc(BINDING_BODY_LIMIT, 32))).body).toBe('"whole"');
    expect(calls.map((x) => [x.op, x.body.length])).toEqual([['/db/all', BINDING_BODY_LIMIT]]);
    behave = async (op, body) => ({ status: 200, body: JSON.stringify({ op, body }) });
    // a raw request whose first read is one byte
    const raw = net.connect(socket.path);
    await new Promise((r) => raw.once('connect', r));
    const text = `POST /db/one HTTP/1.1\r\nhost: x\r\n${BINDING_SECRET_HEADER}: ${SECRET}\r\ncontent-length: 4\r\n\r\nnull`;
    raw.write(text[0]);
    await new Promise((r) => setTimeout(r, 20));
    raw.write(text.slice(1));
    const answer = await new Promise<string>((r) => raw.once('data', (d: Buffer) => r(d.toString())));
    raw.destroy();
    expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
    expect(answer.endsWith(JSON.stringify({ op: '/db/one', body: 'null' }))).toBe(true);
    // the absolute form names the same op; anything but POST is 405, in JSON
    const rawAsk = async (line: string, body = '') => {
      const c = net.connect(socket.path);
      await new Promise((r) => c.once('connect', r));
      c.write(
        `${line}\r\nhost: x\r\n${BINDING_SECRET_HEADER}: ${SECRET}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      const got = await new Promise<string>((r) => c.once('data', (d: Buffer) => r(d.toString())));
      c.destroy();
      return got;
    };
    const absolute = await rawAsk('POST http://binding.internal/db/abs?x=1 HTTP/1.1', '[]');
    expect(absolute.endsWith(JSON.stringify({ op: '/db/abs', body: '[]' }))).toBe(true);
    const get = await rawAsk('GET /db/all HTTP/1.1');
    expect(get.startsWith('HTTP/1.1 405')).toBe(true);
    expect(get).toContain('content-type: application/json');
    expect(get.slice(get.indexOf('\r\n\r\n') + 4)).toBe(
      JSON.stringify({ error: { code: 'method_not_allowed', message: 'binding operations are POST' } }),
    );
  });

  it('HTTP: a request head that stalls is dropped after the idle time; a long op is not', async () => {
    const c = net.connect(socket.path);
    await new Promise((r) => c.once('connect', r));
    const t0 = performance.now();
    c.write(`POST /db/all HTTP/1.1\r\nhost: x\r\n`);
    await new Promise((r) => c.once('close', r));
    expect(performance.now() - t0).toBeGreaterThan(250);
    behave = async () => {
      await new Promise((r) => setTimeout(r, 700));
      return { status: 200, body: '"slow"' };
    };
    const d = net.connect(socket.path);
    await new Promise((r) => d.once('connect', r));
    d.write(`POST /db/all HTTP/1.1\r\nhost: x\r\n${BINDING_SECRET_HEADER}: ${SECRET}\r\ncontent-length: 2\r\n\r\n{}`);
    const got = await new Promise<string>((r) => d.once('data', (b: Buffer) => r(b.toString())));
    expect(got.endsWith('"slow"')).toBe(true);
    // then quiet: dropped after the idle time
    await new Promise((r) => d.once('close', r));
  });

  it('closing the socket ends its framed connections', async () => {
    const s = await startBindingSocket({ bindings, path: join(dir, 'other.sock'), secret: SECRET });
    const c = await connectFramed(s.path, SECRET);
    c.request('/db/all', '{}');
    expect((await c.answer()).status).toBe(200);
    await s.close();
    await c.closed;
  });
});
