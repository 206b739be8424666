/**
 * A reply of pieces (Reply.chunks, fs/explore's answer) on the Node server and as a WHATWG
 * Response: chunked framing with the exact bytes, HEAD, backpressure, a client that goes away
 * mid-answer (the producer is stopped, the host keeps serving), a producer that fails part way
 * (the client never sees a whole 200).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startServer, type RunningServer } from '../../runtime/http/server';
import { responseFromReply, type Call, type Reply } from '../../handlers/core/pipeline';
import { makeTestConfig, makeTestHost, type TestHost } from '../helpers/host';

const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-powered-by': 'Ballast' };
const PIECES = ['{"files":[', '{"name":"é 東京 🚀"}', ',', '{"name":"\\u0001"}', '],"total":2}'];

/** What the producer of a test reply did. */
interface Produced {
  count: number;
  finished: Promise<'done' | 'stopped' | 'failed'>;
}

function producer(kind: 'small' | 'endless' | 'fails'): { chunks: Iterable<string>; produced: Produced } {
  let settle!: (how: 'done' | 'stopped' | 'failed') => void;
  const produced: Produced = { count: 0, finished: new Promise((r) => (settle = r)) };
  function* gen(): Generator<string> {
    let how: 'done' | 'stopped' | 'failed' = 'stopped';
    try {
      if (kind === 'small') {
        for (const p of PIECES) {
          produced.count++;
          yield p;
        }
      } else {
        const big = 'x'.repeat(1 << 20);
        for (let i = 0; i < 2000; i++) {
          if (kind === 'fails' && i === 3) {
            how = 'failed';
            throw new Error('producer failed');
          }
          produced.count++;
          yield i === 0 ? '{"files":["' : big;
        }
      }
      how = 'done';
    } finally {
      settle(how);
    }
  }
  return { chunks: gen(), produced };
}

let t: TestHost;
let srv: RunningServer;
const made: Produced[] = [];

beforeAll(async () => {
  t = await makeTestHost();
  const { config } = makeTestConfig();
  srv = await startServer({
    config,
    env: t.host.env,
    handler: {
      fetch: () => Promise.resolve(new Response('{}')),
      handle: (call: Call): Promise<Reply> => {
        const kind = call.url.pathname.slice(1);
        if (kind === 'plain') return Promise.resolve({ status: 200, headers: HEADERS, body: '{"ok":true}' });
        const { chunks, produced } = producer(kind as 'small' | 'endless' | 'fails');
        made.push(produced);
        return Promise.resolve({ status: 200, headers: HEADERS, body: null, chunks });
      },
    },
  });
});
afterAll(async () => {
  await srv.shutdown(1000);
  await t.close();
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function request(path: string, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${srv.url}${path}`, { method, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('aborted')));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a reply of pieces on the Node server', () => {
  it('is written with chunked framing, the exact UTF-8 bytes of the pieces in order', async () => {
    const r = await request('/small');
    expect(r.status).toBe(200);
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.body.equals(Buffer.from(PIECES.join(''), 'utf8'))).toBe(true);
    expect(JSON.parse(r.body.toString('utf8'))).toEqual({
      files: [{ name: 'é 東京 🚀' }, { name: '\u0001' }],
      total: 2,
    });
    expect(await made[made.length - 1].finished).toBe('done');
  });

  it('HEAD: the headers and no body', async () => {
    const r = await request('/small', 'HEAD');
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
    const plain = await request('/plain');
    expect(plain.headers['content-length']).toBe('11');
    expect(plain.body.toString()).toBe('{"ok":true}');
  });

  it('a client that goes away mid-answer stops the producer; the host keeps serving', async () => {
    const before = made.length;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(`${srv.url}/endless`, { agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    });
    const produced = made[before];
    expect(await produced.finished).toBe('stopped');
    // backpressure: far fewer than the 2000 pieces of 1 MiB were made
    expect(produced.count).toBeLessThan(200);
    const next = await request('/plain');
    expect(next.status).toBe(200);
  });

  it('a client that stops reading is cut off after the request time limit; the producer is stopped', async () => {
    const { config } = makeTestConfig();
    config.limits.requestTimeoutMs = 200;
    const stalled: Produced[] = [];
    const slow = await startServer({
      config,
      env: t.host.env,
      handler: {
        fetch: () => Promise.resolve(new Response('{}')),
        handle: (): Promise<Reply> => {
          const { chunks, produced } = producer('endless');
          stalled.push(produced);
          return Promise.resolve({ status: 200, headers: HEADERS, body: null, chunks });
        },
      },
    });
    try {
      const started = new Promise<http.ClientRequest>((resolve, reject) => {
        const req = http.get(`${slow.url}/endless`, { agent: false }, (res) => {
          res.pause(); // never read: the socket's buffers fill and the server waits for 'drain'
          resolve(req);
        });
        req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
      });
      const req = await started;
      // the server gives up on the stalled connection by itself and stops the producer
      expect(await stalled[0].finished).toBe('stopped');
      req.destroy();
      expect(stalled[0].count).toBeLessThan(200);
    } finally {
      await slow.shutdown(100);
    }
  });

  it('a producer that fails part way breaks the connection: never a whole 200', async () => {
    const before = made.length;
    await expect(request('/fails')).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
    expect(await made[before].finished).toBe('failed');
    expect((await request('/small')).status).toBe(200);
  });
});

describe('a reply of pieces as a WHATWG Response (the isolate entry points)', () => {
  it('streams the same bytes', async () => {
    const { chunks, produced } = producer('small');
    const res = responseFromReply({ status: 200, headers: HEADERS, body: null, chunks });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(PIECES.join(''));
    expect(await produced.finished).toBe('done');
  });

  it('a cancelled body stops the producer', async () => {
    const { chunks, produced } = producer('endless');
    const res = responseFromReply({ status: 200, headers: HEADERS, body: null, chunks });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    expect(await produced.finished).toBe('stopped');
    expect(produced.count).toBeLessThan(10);
  });
});
