/**
 * Every answer is the JSON error shape with the documented headers, including what Node's HTTP
 * parser rejects (answered from the server's clientError hook), unknown methods, and bodies that
 * are not a plain object (null, arrays, deep nesting, __proto__).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig } from '../helpers/host';
import { errorOf, jsonOf } from '../helpers/answers';

let s: Serving;
let admin: string;

beforeAll(async () => {
  const { config } = makeTestConfig();
  s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
  admin = (await createToken(s.host.db, 'admin', ['*'])).token;
});
afterAll(() => s.stop());

/** Sends raw bytes and resolves with the status line, headers and body of the answer. */
function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  return new Promise((resolve, reject) => {
    const sock = connect(s.server.port, '127.0.0.1');
    let data = '';
    sock.on('data', (c) => (data += c.toString('utf8')));
    sock.on('error', reject);
    sock.on('close', () => {
      const [head, body = ''] = data.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: body === '' ? undefined : (JSON.parse(body) as unknown),
      });
    });
    sock.end(bytes);
  });
}

const errorCode = (body: unknown) => (body as { error: { code: string } }).error.code;

describe('answers outside the routes are JSON too', () => {
  it('a malformed request line is a 400 in the error shape with the spec headers', async () => {
    const r = await raw('GARBAGE\r\n\r\n');
    expect(r.status).toBe(400);
    expect(errorCode(r.body)).toBe('bad_request');
    expect(r.headers['x-powered-by']).toBe('Ballast');
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  it('headers over the parser limit are a 431', async () => {
    const r = await raw(`GET /api/v2/kerberos/conf HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(r.status).toBe(431);
    expect(errorCode(r.body)).toBe('headers_too_large');
  });

  it('a NUL in a header is a 400', async () => {
    const r = await raw('GET /api/v2/kerberos/conf HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n');
    expect(r.status).toBe(400);
    expect(errorCode(r.body)).toBe('bad_request');
  });

  it('TRACE on a route path is a 405 naming the allowed methods; on an unknown path a 404', async () => {
    const known = await fetch(`${s.server.url}/api/v2/kerberos/conf`, { method: 'PATCH', headers: { token: admin } });
    expect(known.status).toBe(405);
    expect(known.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const trace = await raw('TRACE /api/v2/kerberos/conf HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(trace.status).toBe(405);
    expect(errorCode(trace.body)).toBe('method_not_allowed');
    const unknown = await raw('TRACE /api/v2/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown.body)).toBe('route_not_found');
  });
});

describe('request bodies', () => {
  const post = (path: string, body: string) =>
    fetch(`${s.server.url}/api/v2${path}`, {
      method: 'POST',
      headers: { token: admin, 'content-type': 'application/json' },
      body,
    }).then(async (r) => ({
      status: r.status,
      json: await jsonOf(r),
    }));

  it.each([
    ['null', 'must be a JSON object'],
    ['[1, 2]', 'must be a JSON object'],
    ['"text"', 'must be a JSON object'],
    [`${'['.repeat(10_000)}${']'.repeat(10_000)}`, 'nested deeper than 32 levels'],
    ['{"conf": "x", "__proto__": {"admin": true}}', '"__proto__" key'],
    ['{"a": {"b": {"__proto__": 1}}}', '"__proto__" key'],
  ])('%s is a 400', async (body, message) => {
    const r = await post('/kerberos/conf/update', body);
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('bad_request');
    expect(errorOf(r).message).toContain(message);
  });

  it('invalid JSON is a 400 invalid_json', async () => {
    const r = await post('/kerberos/conf/update', '{"conf": ');
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('invalid_json');
  });

  it('a route that takes no body refuses fields, naming the first', async () => {
    const r = await post('/kerberos/ticket/destroy', '{"force": true}');
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('validation_failed');
    expect(errorOf(r).issues?.[0].path).toBe('body.force');
  });
});
