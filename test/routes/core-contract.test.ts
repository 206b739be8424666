import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { route } from '../../handlers/core/route';
import type { EventKind } from '../../handlers/core/bindings';
import { ApiError } from '../../handlers/core/errors';
import { makeTestHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';

// Small routes declared with the real contract, to pin its behaviour independent of any area.
const echo = route({
  method: 'POST',
  path: '/test/echo/:name',
  permission: 'test:manage',
  summary: 'echo',
  params: z.object({ name: z.string().regex(/^[a-z ]+$/) }),
  body: z.object({ count: z.number().int().min(1), tags: z.array(z.string()).optional() }),
  response: z.object({ name: z.string(), count: z.number() }),
  async handler({ params, body }) {
    return { name: params.name, count: body.count };
  },
});
const read = route({
  method: 'GET',
  path: '/test/read',
  permission: 'test:read',
  summary: 'read',
  query: z.object({ verbose: z.enum(['true', 'false']).optional() }),
  response: z.object({ verbose: z.boolean() }),
  async handler({ query }) {
    return { verbose: query.verbose === 'true' };
  },
});
const boom = route({
  method: 'GET',
  path: '/test/boom',
  permission: 'test:read',
  summary: 'throws',
  response: z.object({}),
  async handler() {
    throw new Error('secret internal detail /etc/shadow');
  },
});
const conflicting = route({
  method: 'POST',
  path: '/test/conflict',
  permission: 'test:manage',
  summary: 'conflict',
  response: z.object({}),
  async handler() {
    throw new ApiError('conflict', 'already there');
  },
});
const badShape = route({
  method: 'GET',
  path: '/test/bad-shape',
  permission: 'test:read',
  summary: 'returns the wrong shape',
  response: z.object({ n: z.number() }),
  async handler() {
    return { n: 'not a number' } as unknown as { n: number };
  },
});

const sends = route({
  method: 'GET',
  path: '/test/sends',
  permission: 'test:manage',
  summary: 'a GET with side effects',
  sideEffects: true,
  response: z.object({ sent: z.number() }),
  async handler() {
    sent++;
    return { sent };
  },
});
let sent = 0;
const emits = route({
  method: 'POST',
  path: '/test/emit',
  permission: 'test:manage',
  summary: 'emits an event',
  body: z.object({ kind: z.string() }),
  response: z.object({ ok: z.boolean() }),
  async handler({ body, events }) {
    await events.send({ kind: body.kind as EventKind, data: { n: 1 } });
    return { ok: true };
  },
});

let t: TestHost;
beforeAll(async () => {
  t = await makeTestHost({ routes: [echo, read, boom, conflicting, badShape, sends, emits] });
});
afterAll(() => t.close());

describe('route contract', () => {
  it('answers with the spec headers and the handler value', async () => {
    const r = await t.call('POST', '/api/v2/test/echo/ab%20c', { body: { count: 2 } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ name: 'ab c', count: 2 });
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('x-powered-by')).toBe('Ballast');
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('URL-decodes path params before validating them', async () => {
    const r = await t.call('POST', '/api/v2/test/echo/a%2Fb', { body: { count: 1 } });
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('validation_failed');
    expect(errorOf(r).issues![0].path).toBe('params.name');
  });

  it('401 without a token, for a malformed one and for an unknown one', async () => {
    for (const token of [null, 'nope', `blt_000000000000_${'A'.repeat(43)}`]) {
      const r = await t.call('GET', '/api/v2/test/read', { token });
      expect(r.status).toBe(401);
      expect(errorOf(r).code).toBe('unauthorized');
      expect(typeof errorOf(r).requestId).toBe('string');
    }
  });

  it('403 when the token lacks the permission; manage implies read', async () => {
    const other = await t.token(['kerberos:read']);
    expect((await t.call('GET', '/api/v2/test/read', { token: other })).status).toBe(403);
    const manage = await t.token(['test:manage']);
    expect((await t.call('GET', '/api/v2/test/read', { token: manage })).status).toBe(200);
    const readOnly = await t.token(['test:read']);
    const r = await t.call('POST', '/api/v2/test/echo/x', { token: readOnly, body: { count: 1 } });
    expect(r.status).toBe(403);
    expect(errorOf(r).message).toContain('test:manage');
  });

  it('revoked and expired tokens are refused', async () => {
    const tok = await t.token(['*'], 'revoke-me');
    t.host.db.prepare('UPDATE api_tokens SET revoked_at = 1 WHERE name = ?').run('revoke-me');
    expect(errorOf(await t.call('GET', '/api/v2/test/read', { token: tok })).message).toBe('token revoked');
    const tok2 = await t.token(['*'], 'expire-me');
    t.host.db.prepare('UPDATE api_tokens SET expires_at = 1 WHERE name = ?').run('expire-me');
    expect(errorOf(await t.call('GET', '/api/v2/test/read', { token: tok2 })).message).toBe('token expired');
  });

  it('validation errors list every issue with its field path', async () => {
    const r = await t.call('POST', '/api/v2/test/echo/abc', { body: { count: 0, tags: [1] } });
    expect(r.status).toBe(400);
    expect(
      errorOf(r)
        .issues!.map((i: { path: string }) => i.path)
        .sort(),
    ).toEqual(['body.count', 'body.tags.0']);
  });

  it('invalid JSON is a 400 invalid_json; an empty body is {}', async () => {
    expect(errorOf(await t.call('POST', '/api/v2/test/echo/abc', { body: '{nope' })).code).toBe('invalid_json');
    const r = await t.call('POST', '/api/v2/test/echo/abc', { body: '' });
    expect(errorOf(r).issues![0].path).toBe('body.count');
  });

  it('query parameters are validated for GET routes', async () => {
    expect((await t.call('GET', '/api/v2/test/read?verbose=true')).json).toEqual({ verbose: true });
    expect((await t.call('GET', '/api/v2/test/read?verbose=maybe')).status).toBe(400);
  });

  it('an unexpected exception is a 500 with a request id and no internal message', async () => {
    const r = await t.call('GET', '/api/v2/test/boom');
    expect(r.status).toBe(500);
    expect(errorOf(r).code).toBe('internal');
    expect(r.text).not.toContain('shadow');
    expect(errorOf(r).message).toContain(errorOf(r).requestId);
  });

  it('a response that breaks its schema is a 500, not a silent wrong answer', async () => {
    const r = await t.call('GET', '/api/v2/test/bad-shape');
    expect(r.status).toBe(500);
  });

  it('ApiError keeps its status and code', async () => {
    const r = await t.call('POST', '/api/v2/test/conflict', { body: {} });
    expect(r.status).toBe(409);
    expect(r.json).toMatchObject({ error: { code: 'conflict', message: 'already there' } });
  });

  it('unknown route 404, wrong method 405 with Allow, HEAD works as GET, OPTIONS preflight', async () => {
    const nf = await t.call('GET', '/api/v2/nope');
    expect(nf.status).toBe(404);
    expect(errorOf(nf).code).toBe('route_not_found');
    const wrong = await t.call('GET', '/api/v2/test/echo/abc');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, OPTIONS');
    const head = await t.call('HEAD', '/api/v2/test/read');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const pre = await t.call('OPTIONS', '/api/v2/test/read', { token: null });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toContain('token');
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
  });

  it('events carry the request id; a failure to record one is logged, not a failed request', async () => {
    const ok = await t.call('POST', '/api/v2/test/emit', {
      body: { kind: 'test.thing.done' },
      headers: { 'x-request-id': 'req-emit-0001' },
    });
    expect(ok.status).toBe(200);
    const row = t.host.db.prepare("SELECT kind, request_id, data FROM events WHERE kind = 'test.thing.done'").get() as {
      kind: string;
      request_id: string;
      data: string;
    };
    expect(row).toEqual({ kind: 'test.thing.done', request_id: 'req-emit-0001', data: '{"n":1}' });
    const bad = await t.call('POST', '/api/v2/test/emit', { body: { kind: 'Not A Kind' } });
    expect(bad.status).toBe(200);
    expect(bad.json).toEqual({ ok: true });
    // kinds are <area>.<object>.<verb>: two or four segments, or upper case, are not recorded
    for (const kind of ['test.done', 'test.thing.done.twice', 'Test.thing.done', 'test.thing.']) {
      expect((await t.call('POST', '/api/v2/test/emit', { body: { kind } })).status).toBe(200);
    }
    const kinds = t.host.db.prepare('SELECT kind FROM events ORDER BY seq').all() as { kind: string }[];
    expect(kinds.map((k) => k.kind)).toEqual(['test.thing.done']);
  });

  it('HEAD never runs a GET that has side effects', async () => {
    const head = await t.call('HEAD', '/api/v2/test/sends');
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET, OPTIONS');
    expect(sent).toBe(0);
    expect((await t.call('GET', '/api/v2/test/sends')).json).toEqual({ sent: 1 });
    const pre = await t.call('OPTIONS', '/api/v2/test/sends', { token: null });
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET, OPTIONS');
  });

  it('a client-supplied request id is echoed when well-formed', async () => {
    const r = await t.call('GET', '/api/v2/test/read', { headers: { 'x-request-id': 'abcdef12-req' } });
    expect(r.headers.get('x-request-id')).toBe('abcdef12-req');
    const bad = await t.call('GET', '/api/v2/test/read', { headers: { 'x-request-id': 'a\u00e9' } });
    expect(bad.headers.get('x-request-id')).not.toBe('a\u00e9');
  });
});

describe('named locks', () => {
  it('serialise handlers that share a lock, in arrival order', async () => {
    const { withLock } = await import('../../handlers/core/lock');
    const log: string[] = [];
    // a holds the lock until the handler under another lock has run: b, queued behind a on the
    // same lock, must not start before a ends; the other lock is not held up by a
    let releaseA!: () => void;
    const aMayEnd = new Promise<void>((r) => (releaseA = r));
    const step = (id: string, until: Promise<void>) =>
      withLock('t', async () => {
        log.push(`start ${id}`);
        await until;
        log.push(`end ${id}`);
        return id;
      });
    const results = await Promise.all([
      step('a', aMayEnd),
      step('b', Promise.resolve()),
      withLock('other', async () => (log.push('other'), releaseA(), 'o')),
    ]);
    expect(results).toEqual(['a', 'b', 'o']);
    expect(log).toEqual(['start a', 'other', 'end a', 'start b', 'end b']);
    await expect(
      withLock('t', async () => {
        throw new Error('x');
      }),
    ).rejects.toThrow('x');
    expect(await withLock('t', async () => 'after failure')).toBe('after failure');
  });
});
