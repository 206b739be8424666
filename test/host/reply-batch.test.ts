import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { ReplyBatch } from '../../runtime/http/reply-batch';
import { startServer } from '../../runtime/http/server';
import type { Call, Reply } from '../../handlers/core/pipeline';
import type { Env } from '../../handlers/core/bindings';
import { makeTestConfig } from '../helpers/host';

/** A batch whose "socket writes" go to a log, with the turn's flush awaited by `turn()`. */
function logged() {
  const log: string[] = [];
  const batch = new ReplyBatch<string, string>((res, reply) => {
    if (reply === 'throws') throw new Error(`cannot write ${res}`);
    log.push(`write ${res}:${reply}`);
  });
  const done = (res: string) => (e?: unknown) => log.push(e ? `failed ${res}: ${(e as Error).message}` : `done ${res}`);
  return { log, batch, done };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('ReplyBatch: the answers of one event-loop turn are written together', () => {
  it('holds the answers of a turn until its flush, then writes them in order, each followed by its done', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    batch.write('a', '200', done('a'));
    batch.arrive();
    batch.write('b', '404', done('b'));
    expect(log).toEqual([]);
    expect(batch.waiting).toBe(2);
    await turn();
    expect(log).toEqual(['write a:200', 'done a', 'write b:404', 'done b']);
    expect(batch.waiting).toBe(0);
  });

  it('writes at once an answer made after the flush in the same check phase (an audit commit released it)', async () => {
    const { log, batch, done } = logged();
    batch.arrive(); // the flush's immediate is queued first, as a request's is before its audit batch's
    const later = new Promise<void>((r) =>
      setImmediate(() => {
        batch.write('c', '200', done('c'));
        log.push('returned');
        r();
      }),
    );
    await later;
    expect(log).toEqual(['write c:200', 'done c', 'returned']);
  });

  it('holds answers again once a request of a new turn arrives', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    await turn();
    batch.write('d', '200', done('d')); // after the flush: at once
    expect(log).toEqual(['write d:200', 'done d']);
    batch.arrive(); // the next turn's request
    batch.write('e', '200', done('e'));
    expect(log).toEqual(['write d:200', 'done d']);
    await turn();
    expect(log).toEqual(['write d:200', 'done d', 'write e:200', 'done e']);
  });

  it('flushes an answer that came without a request of its turn (never left waiting)', async () => {
    const { log, batch, done } = logged();
    batch.write('f', '200', done('f'));
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual(['write f:200', 'done f']);
  });

  it('a write that throws reaches its own done as the error; the answers after it are still written', async () => {
    const { log, batch, done } = logged();
    batch.arrive();
    batch.write('g', 'throws', done('g'));
    batch.write('h', '200', done('h'));
    await turn();
    expect(log).toEqual(['failed g: cannot write g', 'write h:200', 'done h']);
  });
});

describe("the server writes a turn's answers together", () => {
  const env = { VARS: { basePath: '/api/v2' } } as unknown as Env;
  const handler = {
    fetch: () => Promise.reject(new Error('in-process: handle is used')),
    handle: async (call: Call): Promise<Reply> => ({
      status: call.url.pathname === '/missing' ? 404 : 200,
      headers: { 'content-type': 'text/plain' },
      body: `answer to ${call.url.pathname}`,
    }),
  };

  it('two requests pipelined on one connection get their answers whole and in order; the log sees each after its write', async () => {
    const seen: string[] = [];
    const { config } = makeTestConfig();
    const srv = await startServer({
      config,
      env,
      handler,
      onAnswered: (a) => seen.push(`${a.call.url.pathname} ${a.status}`),
    });
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(srv.port, '127.0.0.1');
        let got = '';
        socket.setEncoding('utf8');
        socket.on('data', (d: string) => {
          got += d;
          if (got.includes('answer to /missing')) socket.end();
        });
        socket.on('end', () => resolve(got));
        socket.on('error', reject);
        socket.write('GET /first HTTP/1.1\r\nhost: x\r\n\r\nGET /missing HTTP/1.1\r\nhost: x\r\n\r\n');
      });
      const first = text.indexOf('HTTP/1.1 200 OK');
      const second = text.indexOf('HTTP/1.1 404 Not Found');
      expect(first).toBe(0);
      expect(second).toBeGreaterThan(text.indexOf('answer to /first'));
      expect(text.match(/content-length: (\d+)/gi)).toEqual(['content-length: 16', 'content-length: 18']);
      expect(seen).toEqual(['/first 200', '/missing 404']);
    } finally {
      await srv.shutdown(1000);
    }
  });

  it('answers made in the same turn on 20 connections each reach their own client', async () => {
    const { config } = makeTestConfig();
    const srv = await startServer({ config, env, handler });
    try {
      const bodies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          fetch(`${srv.url}/n${i}`, { headers: { connection: 'close' } }).then(
            async (r) => `${r.status} ${await r.text()}`,
          ),
        ),
      );
      expect(bodies).toEqual(Array.from({ length: 20 }, (_, i) => `200 answer to /n${i}`));
    } finally {
      await srv.shutdown(1000);
    }
  });
});
