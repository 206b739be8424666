/**
 * The binding socket (runtime/bindings/socket.ts; docs/bindings-protocol.md) against a
 * BindingServer that records its calls: the secret, the op and request id each request names,
 * what it refuses (a wrong secret, anything but POST, a payload over the limit, an unknown op),
 * a failed op's 500, idleness, and closing it. The same operations as the Deno entry's calls on
 * the hop connection (`answer`): test/host/isolate-forward-framed.test.ts.
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
import { privateDir } from '../helpers/tmp';

const SECRET = 's'.repeat(43);

describe('the binding socket', () => {
  const dir = privateDir('binding-socket');
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
    calls.length = 0;
    logged.length = 0;
    behave = async (op, body) => ({ status: 200, body: JSON.stringify({ op, body }) });
  });
  afterAll(() => socket.close());

  /** one HTTP request with a given secret header (undefined: none) */
  const post = (path: string, body: string, secret: string | undefined) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(body)) };
      if (secret !== undefined) headers[BINDING_SECRET_HEADER] = secret;
      const r = http.request({ socketPath: socket.path, method: 'POST', path, headers, agent: false }, (res) => {
        let t = '';
        res.on('data', (c: Buffer) => (t += c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: t }));
      });
      r.on('error', fail);
      r.end(body);
    });

  it('a wrong or missing secret is 401; nothing runs', async () => {
    for (const wrong of [`${SECRET.slice(0, -1)}t`, SECRET.slice(0, -1), `${SECRET}s`, '', undefined]) {
      const a = await post('/db/all', '{}', wrong);
      expect([a.status, JSON.parse(a.body)]).toEqual([
        401,
        { error: { code: 'unauthorized', message: 'missing or wrong binding secret' } },
      ]);
    }
    expect(calls).toEqual([]);
    expect((await post('/db/all', '{}', SECRET)).status).toBe(200);
  });

  it('an unknown op is 404 and a failed one 500 (logged), the same from `answer`', async () => {
    behave = (op) =>
      op === '/db/boom' ? Promise.reject(new Error('exploded')) : Promise.resolve({ status: 200, body: 'null' });
    for (const ask of [(op: string) => post(op, '{}', SECRET), (op: string) => socket.answer(op, '{}', 'rid-1')]) {
      const unknown = await ask('/nope/x');
      expect([unknown.status, JSON.parse(unknown.body)]).toEqual([
        404,
        { error: { code: 'not_found', message: 'unknown binding operation /nope/x' } },
      ]);
      const failed = await ask('/db/boom');
      expect([failed.status, JSON.parse(failed.body)]).toEqual([
        500,
        { error: { code: 'internal', message: 'binding /db/boom failed' } },
      ]);
      expect(logged.join('\n')).toContain('binding /db/boom failed: Error: exploded');
      logged.length = 0;
      expect(await ask('/tokens/touch')).toEqual({ status: 200, body: 'null' });
    }
    expect(calls.map((x) => x.op)).toEqual(['/db/boom', '/tokens/touch', '/db/boom', '/tokens/touch']);
    expect(calls[3].requestId).toBe('rid-1');
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

  it('answers each request with its op, JSON text and request id; a payload over the limit is 413 and does not run', async () => {
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

  it('a request head that stalls is dropped after the idle time; a long op is not; a silent connection is dropped', async () => {
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
    // one that never says anything, too
    const silent = net.connect(socket.path);
    const t1 = performance.now();
    await new Promise((r) => silent.once('close', r));
    expect(performance.now() - t1).toBeGreaterThan(250);
  });

  it('closing the socket ends its keep-alive connections', async () => {
    const s = await startBindingSocket({ bindings, path: join(dir, 'other.sock'), secret: SECRET });
    const c = net.connect(s.path);
    await new Promise((r) => c.once('connect', r));
    c.write(`POST /db/all HTTP/1.1\r\nhost: x\r\n${BINDING_SECRET_HEADER}: ${SECRET}\r\ncontent-length: 2\r\n\r\n{}`);
    const got = await new Promise<string>((r) => c.once('data', (b: Buffer) => r(b.toString())));
    expect(got.startsWith('HTTP/1.1 200')).toBe(true);
    const closed = new Promise((r) => c.once('close', r));
    await s.close();
    await closed;
  });
});
