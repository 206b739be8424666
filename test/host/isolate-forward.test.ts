/**
 * The host's side of the hop to an isolate (runtime/isolate/forward.ts), against a real HTTP
 * server on a Unix socket standing in for Deno.serve or workerd: what goes over (the client's
 * headers without the hop's own, the host's additions, the body), what comes back (status,
 * headers, bytes), and an event stream passed on piece by piece and closed when the client goes.
 */
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenLookup, TokenRecord } from '../../handlers/core/bindings';
import { HOP_SECRET_HEADER, TOKEN_ROW_HEADER, encodeTokenRow } from '../../handlers/core/hop';
import { CONNECTION_HEADER } from '../../handlers/core/pipeline';
import { forwarder, loadUndici, UNDICI_POOL_MODULE } from '../../runtime/isolate/forward';
import { privateDir } from '../helpers/tmp';
import { callOf, expectAnswerArrives, heldBackStream, HOP_TOKEN, hopTokenRow, replyText } from '../helpers/hop';

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const socketPath = join(privateDir('ballast-forward'), 'isolate.sock');
let answer: Answer = (_req, res) => res.end();
const seen: Seen[] = [];
/** resolved when the server sees a response closed before it ended (the client went away) */
let closedEarly: Promise<void> = Promise.resolve();
let server: http.Server;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const row = hopTokenRow;
/** tokens in the product's shape (auth.ts TOKEN_PATTERN): the first names row's id */
const TOKEN = HOP_TOKEN;
const OTHER = `blt_${'b'.repeat(12)}_${'s'.repeat(43)}`;
let current: TokenRecord | null = row;
const lookups: string[] = [];
const tokens: TokenLookup = {
  token: (id) => (lookups.push(id), id === row.id ? current : null),
  touch: () => undefined,
};

const text = replyText;

describe('forwarding a call to the isolate', () => {
  let fwd: Awaited<ReturnType<typeof forwarder>>;
  beforeAll(async () => {
    fwd = await forwarder({ socketPath }, { secret: 'hop-secret', tokens });
  });
  afterAll(() => fwd.close());

  it("passes the client's headers on without the hop's own, and adds the host's", async () => {
    seen.length = 0;
    answer = (_req, res) => res.end('{}');
    const call = await callOf('http://box.example:8443/api/v2/fs/available_fs?x=1&y=%20', {
      headers: {
        token: TOKEN,
        accept: 'application/json',
        'accept-encoding': 'gzip',
        upgrade: 'websocket',
        te: 'trailers',
        expect: '100-continue',
        'x-request-id': 'client-chosen-id',
        [HOP_SECRET_HEADER]: 'forged',
        [TOKEN_ROW_HEADER]: 'forged',
        [CONNECTION_HEADER]: '{"remoteAddress":"6.6.6.6"}',
      },
    });
    call.requestId = 'host-request-1';
    call.connection = { remoteAddress: '192.0.2.7', localAddress: '192.0.2.1' };
    await fwd.handle(call);
    expect(seen).toHaveLength(1);
    const { method, url, headers, body } = seen[0];
    expect([method, url, body]).toEqual(['GET', '/api/v2/fs/available_fs?x=1&y=%20', '']);
    expect(headers.host).toBe('box.example:8443');
    expect(headers.token).toBe(TOKEN);
    expect(headers.accept).toBe('application/json');
    for (const dropped of ['accept-encoding', 'upgrade', 'te', 'expect']) expect(headers[dropped]).toBeUndefined();
    expect(headers['x-request-id']).toBe('host-request-1');
    expect(headers[HOP_SECRET_HEADER]).toBe('hop-secret');
    expect(headers[TOKEN_ROW_HEADER]).toBe(encodeTokenRow(row));
    expect(JSON.parse(String(headers[CONNECTION_HEADER]))).toEqual(call.connection);
  });

  it("sends a token's row as it is now, and null for an unknown token; no row without a token", async () => {
    seen.length = 0;
    answer = (_req, res) => res.end('{}');
    const asked = async (token?: string) => {
      const c = await callOf('http://h/api/v2/x', { headers: token ? { token } : {} });
      c.note = {};
      return c;
    };
    const calls = [await asked(TOKEN), await asked(TOKEN), await asked(OTHER), await asked()];
    await fwd.handle(calls[0]);
    current = { ...row, last_used_at: 99 };
    await fwd.handle(calls[1]);
    await fwd.handle(calls[2]);
    lookups.length = 0;
    await fwd.handle(calls[3]);
    expect(seen.map((s) => s.headers[TOKEN_ROW_HEADER])).toEqual([
      encodeTokenRow(row),
      encodeTokenRow({ ...row, last_used_at: 99 }),
      'null',
      undefined,
    ]);
    expect(lookups).toEqual([]);
    // the request log names the token from the row that was sent (CallNote.presented)
    expect(calls.map((c) => c.note?.presented)).toEqual([row, { ...row, last_used_at: 99 }, null, undefined]);
    current = row;
  });

  it('sends a body with its length; a GET body travels as query fields', async () => {
    seen.length = 0;
    answer = (_req, res) => res.end('{}');
    await fwd.handle(
      await callOf('http://h/api/v2/pod', { method: 'POST', body: '{"name":"née"}', headers: { token: TOKEN } }),
    );
    expect(seen[0].body).toBe('{"name":"née"}');
    expect(seen[0].headers['content-length']).toBe(String(Buffer.byteLength('{"name":"née"}')));
    const get = await callOf('http://h/api/v2/fs/list');
    get.bodyText = '{"fs_path":"/srv"}';
    await fwd.handle(get);
    expect([seen[1].method, seen[1].url, seen[1].body]).toEqual(['GET', '/api/v2/fs/list?fs_path=%2Fsrv', '']);
  });

  it("an isolate's answer read from the hop goes to its client with the turn's other answers (arrive)", () =>
    expectAnswerArrives(async () => fwd.handle(await callOf('http://h/api/v2/x'))));

  it("answers the isolate's status, headers (repeats joined; its date and framing dropped) and bytes", async () => {
    answer = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-thing', ['a', 'b']);
      res.setHeader('x-request-id', 'rid');
      res.statusCode = 409;
      res.end('{"error":"ünïcode"}');
    };
    const reply = await fwd.handle(await callOf('http://h/api/v2/x'));
    expect(reply.status).toBe(409);
    expect(reply.headers).toEqual({ 'content-type': 'application/json', 'x-thing': 'a, b', 'x-request-id': 'rid' });
    expect(Buffer.from(reply.body as Uint8Array).toString()).toBe('{"error":"ünïcode"}');
  });

  it('HEAD and 204 have no body', async () => {
    answer = (req, res) => {
      res.statusCode = req.method === 'HEAD' ? 200 : 204;
      res.setHeader('content-type', 'application/json');
      res.end();
    };
    const head = await fwd.handle(await callOf('http://h/api/v2/x', { method: 'HEAD' }));
    expect([head.status, head.body]).toEqual([200, null]);
    const none = await fwd.handle(await callOf('http://h/api/v2/x', { method: 'DELETE' }));
    expect([none.status, none.body]).toEqual([204, null]);
  });

  it('an isolate that drops the connection mid-answer is an error, not a cut answer', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"half":');
      setTimeout(() => res.destroy(), 10);
    };
    await expect(fwd.handle(await callOf('http://h/api/v2/x'))).rejects.toThrow();
  });

  it('an event stream comes piece by piece while the isolate writes it, split characters whole', async () => {
    let finish = () => undefined as void;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const snow = Buffer.from('data: ❄\n\n');
      res.write(snow.subarray(0, 6));
      res.write(snow.subarray(6, 7)); // the snowflake's first byte alone: no text yet
      setTimeout(() => res.write(snow.subarray(7)), 20);
      finish = () => res.end('event: state\ndata: done\n\n');
    };
    const reply = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events'));
    expect([reply.status, reply.body, reply.headers['content-type']]).toEqual([
      200,
      null,
      'text/event-stream; charset=utf-8',
    ]);
    const it = (reply.chunks as AsyncIterable<string>)[Symbol.asyncIterator]();
    let first = '';
    const pieces: string[] = [];
    while (first !== 'data: ❄\n\n') {
      const piece = (await it.next()).value as string;
      pieces.push(piece);
      first += piece;
    }
    expect(pieces).not.toContain('');
    // the answer is not over yet: the rest comes only once the isolate writes it
    finish();
    let rest = '';
    for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value;
    expect(rest).toBe('event: state\ndata: done\n\n');
  });

  it("when the client goes away the isolate's stream is closed", async () => {
    closedEarly = new Promise<void>((resolve) => {
      answer = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('retry: 3000\n\n');
        res.on('close', () => {
          if (!res.writableEnded) resolve();
        });
      };
    });
    const reply = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events'));
    const it = (reply.chunks as AsyncIterable<string>)[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe('retry: 3000\n\n');
    await it.return?.(undefined);
    await closedEarly;
  });

  it('many pieces written at once all arrive, in order, to a slow reader', async () => {
    const pieces = Array.from({ length: 200 }, (_, i) => `id: ${i}\ndata: ${'x'.repeat(i)}\n\n`);
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const p of pieces) res.write(p);
      res.end();
    };
    const reply = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events'));
    let all = '';
    for await (const piece of reply.chunks as AsyncIterable<string>) {
      all += piece;
      await new Promise((r) => setImmediate(r));
    }
    expect(all).toBe(pieces.join(''));
  });

  it('an isolate that drops the connection mid-stream ends the stream with an error', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('retry: 3000\n\n');
      setTimeout(() => res.destroy(), 20);
    };
    const reply = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events'));
    const read = async () => {
      for await (const piece of reply.chunks as AsyncIterable<string>) void piece;
    };
    await expect(read()).rejects.toThrow();
  });

  it("while nobody reads an event stream, the isolate's writes are held back; then everything arrives", async () => {
    const big = heldBackStream();
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      big.run(
        (piece) => res.write(piece),
        (more) => res.once('drain', more),
        () => res.end(),
      );
    };
    const r = await big.readAfterStall(await fwd.handle(await callOf('http://h/api/v2/jobs/j/events')));
    expect(r.atStall).toBeLessThan(big.total);
    expect([r.atEnd, r.read]).toEqual([big.total, big.total * big.piece.length]);
  });

  it('only a 2xx event stream of a GET is streamed: HEAD has no body, a 300 is collected', async () => {
    answer = (req, res) => {
      res.writeHead(req.method === 'HEAD' ? 200 : 300, { 'content-type': 'text/event-stream' });
      res.end(req.method === 'HEAD' ? undefined : 'data: x\n\n');
    };
    const head = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events', { method: 'HEAD' }));
    expect([head.status, head.body, head.chunks]).toEqual([200, null, undefined]);
    const other = await fwd.handle(await callOf('http://h/api/v2/jobs/j/events'));
    expect([other.status, other.chunks, Buffer.from(other.body as Uint8Array).toString()]).toEqual([
      300,
      undefined,
      'data: x\n\n',
    ]);
  });

  it('a 304 has no body; an empty 200 is empty bytes; a body in several writes comes whole', async () => {
    answer = (req, res) => {
      if (req.url === '/304') return res.writeHead(304).end();
      if (req.url === '/empty') return res.writeHead(200, { 'content-length': '0' }).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
      setTimeout(() => res.write('"b",'), 10);
      setTimeout(() => res.end('"c":1}'), 20);
    };
    const notModified = await fwd.handle(await callOf('http://h/304'));
    expect([notModified.status, notModified.body]).toEqual([304, null]);
    const empty = await fwd.handle(await callOf('http://h/empty'));
    expect([empty.status, Buffer.from(empty.body as Uint8Array).length]).toEqual([200, 0]);
    const whole = await fwd.handle(await callOf('http://h/three'));
    expect(Buffer.from(whole.body as Uint8Array).toString()).toBe('{"a":"b","c":1}');
  });

  it('fetch answers a WHATWG Response with the same status and body', async () => {
    answer = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    };
    const res = await fwd.fetch(new Request('http://h/api/v2/x'));
    expect([res.status, await res.text()]).toEqual([200, '{"ok":true}']);
    expect(await text(await fwd.handle(await callOf('http://h/api/v2/x')))).toBe('{"ok":true}');
  });
});

describe("the hop's client", () => {
  it("is undici's Pool, loaded from its own module (not the whole package) and only once", async () => {
    const { createRequire } = await import('node:module');
    const fromHere = createRequire(import.meta.url);
    const pkg = (await import('undici')) as { Pool: unknown };
    expect(fromHere(UNDICI_POOL_MODULE)).toBe(pkg.Pool);
    const first = loadUndici();
    expect(loadUndici()).toBe(first);
    expect(await first).toBe(pkg.Pool);
  });
});
