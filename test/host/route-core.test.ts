/**
 * The route contract (handlers/core/route.ts) called directly, one request at a time, with
 * in-memory bindings: what a handler's answer becomes (objects, Responses, JsonText, HEAD, 204),
 * how params, query and body are read and refused, what the host is told (call.note), and a
 * route served alone. core-contract.test.ts covers the same contract through a whole test host;
 * this file reaches the branches a host never sends (no env, a hostile Response look-alike).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { JsonText, route } from '../../handlers/core/route';
import type { AppEvent, Env, TokenRecord } from '../../handlers/core/bindings';
import type { Call, CallNote, Reply } from '../../handlers/core/pipeline';

const vars = { productName: 'Ballast', hostId: 'h1', paths: {}, bin: {}, settings: {} };
const sent: AppEvent[] = [];
const tokens: Record<string, TokenRecord> = {};
const env = (over: Partial<Env> = {}): Env =>
  ({
    VARS: vars,
    DB: {} as Env['DB'],
    EVENTS: { send: async (e: AppEvent) => void sent.push(e) },
    TOKENS_DIRECT: { token: (id: string) => tokens[id] ?? null, touch: () => undefined },
    SYSTEM: { fetch: async () => new Response('{}') },
    ...over,
  }) as Env;

function call(method: string, url: string, o: { body?: string; token?: string; note?: CallNote } = {}): Call {
  const headers: Record<string, string> = o.token ? { token: o.token } : {};
  return {
    method,
    url: new URL(url, 'http://box'),
    header: (n) => headers[n] ?? null,
    bodyText: o.body,
    connection: {},
    requestId: 'req-00000001',
    note: o.note,
  };
}
const json = (r: Reply) => JSON.parse(String(r.body)) as Record<string, unknown>;
const err = (r: Reply) => (json(r) as { error: { code: string; message: string } }).error;

afterEach(() => {
  vi.restoreAllMocks();
  sent.length = 0;
});

const answering = (value: () => unknown, response: z.ZodType = z.unknown()) =>
  route({
    method: 'GET',
    path: '/t/answer',
    permission: 'public',
    summary: 'answers what it is given',
    response,
    handler: async () => value() as never,
  });

describe('what a handler answer becomes', () => {
  it('a Response keeps its status, headers and text; 204 and HEAD have no body', async () => {
    const made = answering(() => new Response('made', { status: 201, headers: { 'x-one': '1' } }));
    const r = await made.handle(call('GET', '/api/v2/t/answer'), {}, env());
    expect([r.status, r.headers['x-one'], r.body]).toEqual([201, '1', 'made']);
    const head = await made.handle(call('HEAD', '/api/v2/t/answer'), {}, env());
    expect([head.status, head.headers['x-one'], head.body]).toEqual([201, '1', null]);
    const none = answering(() => new Response(null, { status: 204 }));
    expect((await none.handle(call('GET', '/api/v2/t/answer'), {}, env())).body).toBe(null);
  });

  it('plain objects, arrays, null-prototype objects and primitives are JSON answers, checked by the schema', async () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    for (const [value, text] of [
      [{ a: 1 }, '{"a":1}'],
      [[1, 2], '[1,2]'],
      [bare, '{"a":1}'],
      ['text', '"text"'],
      [7, '7'],
    ] as const) {
      const r = await answering(() => value).handle(call('GET', '/api/v2/t/answer'), {}, env());
      expect([r.status, r.headers['content-type'], r.body]).toEqual([200, 'application/json; charset=utf-8', text]);
    }
  });

  it('plain answers never touch the global Response (on Node its first use loads undici)', async () => {
    const got = vi.spyOn(globalThis, 'Response', 'get');
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    for (const value of [{ a: 1 }, [1], bare, 'text', 7, null])
      expect((await answering(() => value).handle(call('GET', '/api/v2/t/answer'), {}, env())).status).toBe(200);
    expect(got).not.toHaveBeenCalled();
  });

  it('an answer that does not match the response schema is a 500 naming the request, logged with the route', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const r = await answering(() => ({ n: 'x' }), z.object({ n: z.number() })).handle(
      call('GET', '/api/v2/t/answer'),
      {},
      env(),
    );
    expect([r.status, err(r).message]).toEqual([500, 'internal error; see the server log for request req-00000001']);
    expect(log.mock.calls[0][0]).toBe('[req-00000001] response of GET /api/v2/t/answer does not match its schema');
  });

  it('JsonText: a string is the body, HEAD has none, pieces become chunks', async () => {
    const whole = answering(() => new JsonText('{"x":1}'));
    expect((await whole.handle(call('GET', '/api/v2/t/answer'), {}, env())).body).toBe('{"x":1}');
    const head = await whole.handle(call('HEAD', '/api/v2/t/answer'), {}, env());
    expect([head.status, head.body, head.chunks]).toEqual([200, null, undefined]);
    const pieces = ['[', '1', ']'];
    const r = await answering(() => new JsonText(pieces)).handle(call('GET', '/api/v2/t/answer'), {}, env());
    expect([r.status, r.body, r.chunks]).toEqual([200, null, pieces]);
  });

  it('with no env at all the answer is still a JSON 500, never a thrown error', async () => {
    const r = await answering(() => ({})).handle(call('GET', '/api/v2/t/answer'), {}, undefined as unknown as Env);
    expect([r.status, err(r).code]).toEqual([500, 'internal']);
  });
});

const echo = route({
  method: 'POST',
  path: '/t/echo/:name',
  permission: 't:manage',
  summary: 'echo',
  params: z.object({ name: z.string().regex(/^[a-z é]+$/) }),
  query: z.object({ tag: z.union([z.string(), z.array(z.string())]).optional(), n: z.string().optional() }),
  body: z.object({ count: z.number().int() }),
  response: z.object({ name: z.string(), tag: z.unknown(), count: z.number() }),
  async handler({ params, query, body, events }) {
    await events.send({ kind: 't.echo.done', data: { name: params.name } });
    return { name: params.name, tag: query.tag ?? null, count: body.count };
  },
});
const TOKEN = `blt_aaaaaaaaaaaa_${'A'.repeat(43)}`;

describe('params, query and body', () => {
  // the test token's hash: SHA-256 of the secret, hex (as runtime/tokens.ts stores it)
  const secretHash = async (s: string) =>
    Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s))).toString('hex');
  const admit = async (permissions: string[]) => {
    tokens.aaaaaaaaaaaa = {
      id: 'aaaaaaaaaaaa',
      name: 'tester',
      hash: await secretHash('A'.repeat(43)),
      permissions: JSON.stringify(permissions),
      expires_at: null,
      revoked_at: null,
      last_used_at: Date.now(),
    };
  };
  const post = (url: string, body: string, note?: CallNote) =>
    echo.handle(
      call('POST', url, { body, token: TOKEN, note }),
      { name: new URL(url, 'http://box').pathname.split('/')[5] },
      env(),
    );

  it('decodes the path parameter, collects a repeated query key as a list, and tells the host route and token', async () => {
    await admit(['t:manage']);
    const note: CallNote = {};
    const r = await post('/api/v2/t/echo/caf%C3%A9?tag=a&tag=b', '{"count":2}', note);
    expect([r.status, json(r)]).toEqual([200, { name: 'café', tag: ['a', 'b'], count: 2 }]);
    expect(note).toEqual({ route: '/api/v2/t/echo/:name', token: { id: 'aaaaaaaaaaaa', name: 'tester' } });
    expect(sent).toEqual([{ kind: 't.echo.done', data: { name: 'café' }, requestId: 'req-00000001' }]);
    const once = await post('/api/v2/t/echo/x?tag=a', '{"count":1}');
    expect(json(once).tag).toBe('a');
  });

  it('a public route tells the host its route but no token', async () => {
    const note: CallNote = {};
    await answering(() => ({})).handle(call('GET', '/api/v2/t/answer', { note }), {}, env());
    expect(note).toEqual({ route: '/api/v2/t/answer' });
  });

  it('a path parameter that is not URL encoding is a 400 naming it', async () => {
    await admit(['t:manage']);
    const r = await echo.handle(
      call('POST', '/api/v2/t/echo/%E0%A4%A', { body: '{"count":1}', token: TOKEN }),
      { name: '%E0%A4%A' },
      env(),
    );
    expect([r.status, err(r).code, err(r).message]).toEqual([
      400,
      'bad_request',
      'path parameter name is not valid URL encoding',
    ]);
  });

  it('names the location of what failed: params, query, body', async () => {
    await admit(['t:manage']);
    const p = await post('/api/v2/t/echo/X1', '{"count":1}');
    expect([p.status, err(p).message]).toEqual([400, expect.stringMatching(/^invalid params: params\.name/)]);
    const q = await post('/api/v2/t/echo/x?n=1&n=2', '{"count":1}');
    expect(err(q).message).toMatch(/^invalid query: query\.n/);
    const b = await post('/api/v2/t/echo/x', '{"count":1.5}');
    expect(err(b).message).toMatch(/^invalid body: body\.count/);
  });

  it('a route without a body schema refuses any body field, naming it', async () => {
    const r = await route({
      method: 'POST',
      path: '/t/nobody',
      permission: 'public',
      summary: 'takes {}',
      response: z.object({}),
      handler: async () => ({}),
    }).handle(call('POST', '/api/v2/t/nobody', { body: '{"force":true}' }), {}, env());
    expect([r.status, json(r).error]).toEqual([
      400,
      {
        code: 'validation_failed',
        message: 'invalid body.force: this route takes no body fields (send {})',
        issues: [{ path: 'body.force', message: 'this route takes no body fields (send {})' }],
        requestId: 'req-00000001',
      },
    ]);
  });

  it('an event that cannot be recorded is logged with the request and kind; the request still succeeds', async () => {
    await admit(['t:manage']);
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const r = await echo.handle(
      call('POST', '/api/v2/t/echo/x', { body: '{"count":1}', token: TOKEN }),
      { name: 'x' },
      env({
        EVENTS: {
          send: async () => {
            throw new Error('outbox is read-only');
          },
        },
      }),
    );
    expect(r.status).toBe(200);
    expect(log.mock.calls.map((c) => c[0])).toEqual([
      '[req-00000001] event t.echo.done was not recorded: outbox is read-only',
    ]);
  });
});

describe('what the route declares', () => {
  it('carries long, examples and the content type into its meta only when given', () => {
    const plain = answering(() => ({}));
    expect(plain.meta).toEqual({
      method: 'GET',
      path: '/api/v2/t/answer',
      permission: 'public',
      summary: 'answers what it is given',
    });
    // no key for what was not given (an undefined `long` would still be a key of the manifest entry)
    expect(Object.keys(plain.meta)).toEqual(['method', 'path', 'permission', 'summary']);
    const full = route({
      method: 'GET',
      path: '/t/full',
      permission: 't:read',
      summary: 'all of it',
      sideEffects: true,
      long: { budgetS: 30, phases: ['one'] },
      examples: [{ summary: 'one', request: {} } as never],
      style: { contentType: 'application/string; charset=utf-8' },
      response: z.object({}),
      handler: async () => ({}),
    });
    expect(full.meta).toMatchObject({
      sideEffects: true,
      long: { budgetS: 30, phases: ['one'] },
      examples: [{ summary: 'one' }],
      contentType: 'application/string; charset=utf-8',
    });
    const empty = route({
      ...{ method: 'GET', path: '/t/e', permission: 'public', summary: 's' },
      examples: [],
      response: z.object({}),
      handler: async () => ({}),
    } as never);
    expect('examples' in empty.meta).toBe(false);
  });

  it('a query schema that is not an object is refused when the route is declared, naming it', () => {
    expect(() =>
      route({
        method: 'GET',
        path: '/t/q',
        permission: 'public',
        summary: 'q',
        query: z.string() as never,
        response: z.object({}),
        handler: async () => ({}),
      }),
    ).toThrow('GET /api/v2/t/q: a query schema must be a z.object');
  });

  it('served alone, a route answers its own path (with its style) and 404s any other', async () => {
    const s3ish = route({
      method: 'GET',
      path: '/t/styled',
      permission: 'public',
      summary: 'styled',
      style: { contentType: 'application/string; charset=utf-8' },
      response: z.object({ ok: z.boolean() }),
      handler: async () => ({ ok: true }),
    });
    const ok = await s3ish.fetch(new Request('http://box/api/v2/t/styled'), env(), { waitUntil: () => undefined });
    expect([ok.status, ok.headers.get('content-type'), await ok.text()]).toEqual([
      200,
      'application/string; charset=utf-8',
      '{"ok":true}',
    ]);
    const other = await s3ish.fetch(new Request('http://box/api/v2/t/other'), env(), { waitUntil: () => undefined });
    expect([other.status, other.headers.get('content-type')]).toEqual([404, 'application/string; charset=utf-8']);
  });
});
