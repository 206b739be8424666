/**
 * handlers/core/errors.ts on its own (#35): the status each code answers, the body's shape, and
 * what an unexpected error may say (only the request id: no message of it leaks).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  badGateway,
  badRequest,
  codeForStatus,
  conflict,
  errorForStatus,
  forbidden,
  internalError,
  issuesOf,
  issuesText,
  notFound,
  STATUS,
  toApiError,
  validationFailed,
} from '../../handlers/core/errors';
import { ParseError } from '../../handlers/core/parse-error';

afterEach(() => vi.restoreAllMocks());

const shape = (e: ApiError) => [e.status, e.code, e.message];

describe('codes and statuses', () => {
  it('each code has its one status', () => {
    expect(STATUS).toEqual({
      bad_request: 400,
      validation_failed: 400,
      invalid_json: 400,
      unauthorized: 401,
      forbidden: 403,
      not_found: 404,
      route_not_found: 404,
      method_not_allowed: 405,
      conflict: 409,
      cancelled: 409,
      payload_too_large: 413,
      unsupported_media_type: 415,
      headers_too_large: 431,
      internal: 500,
      not_implemented: 501,
      not_recorded: 501,
      command_failed: 502,
      bad_gateway: 502,
      busy: 503,
      timeout: 504,
      command_timeout: 504,
    });
  });
  it('a status maps back to its usual code; any other status is internal', () => {
    const table = [400, 401, 403, 404, 405, 409, 413, 415, 431, 501, 502, 503, 504, 500, 418, 200].map((s) => [
      s,
      codeForStatus(s),
    ]);
    expect(table).toEqual([
      [400, 'bad_request'],
      [401, 'unauthorized'],
      [403, 'forbidden'],
      [404, 'not_found'],
      [405, 'method_not_allowed'],
      [409, 'conflict'],
      [413, 'payload_too_large'],
      [415, 'unsupported_media_type'],
      [431, 'headers_too_large'],
      [501, 'not_implemented'],
      [502, 'command_failed'],
      [503, 'busy'],
      [504, 'command_timeout'],
      [500, 'internal'],
      [418, 'internal'],
      [200, 'internal'],
    ]);
    expect(shape(errorForStatus(409, 'taken', { details: { a: 1 } }))).toEqual([409, 'conflict', 'taken']);
    expect(errorForStatus(409, 'taken', { details: { a: 1 } }).details).toEqual({ a: 1 });
  });
});

describe('ApiError', () => {
  it('carries its status, code, name, issues, details and headers', () => {
    const e = new ApiError('busy', 'later', {
      issues: [{ path: 'a', message: 'm' }],
      details: { d: 1 },
      headers: { 'retry-after': '5' },
    });
    expect([e.name, e.status, e.code, e.message, e.issues, e.details, e.headers]).toEqual([
      'ApiError',
      503,
      'busy',
      'later',
      [{ path: 'a', message: 'm' }],
      { d: 1 },
      { 'retry-after': '5' },
    ]);
    expect(e).toBeInstanceOf(Error);
  });
  it('body: code and message; requestId, issues and details only when present', () => {
    expect(new ApiError('not_found', 'gone').body()).toEqual({ error: { code: 'not_found', message: 'gone' } });
    expect(Object.keys(new ApiError('not_found', 'gone').body('').error)).toEqual(['code', 'message']);
    expect(
      new ApiError('conflict', 'taken', { issues: [{ path: 'p', message: 'm' }], details: { x: 'y' } }).body('r-1'),
    ).toEqual({
      error: {
        code: 'conflict',
        message: 'taken',
        requestId: 'r-1',
        issues: [{ path: 'p', message: 'm' }],
        details: { x: 'y' },
      },
    });
  });
  it('the shorthands', () => {
    expect(shape(badRequest('no'))).toEqual([400, 'bad_request', 'no']);
    expect(badRequest('no').issues).toBeUndefined();
    const v = badRequest('no', [{ path: 'body.a', message: 'm' }]);
    expect([...shape(v), v.issues]).toEqual([400, 'validation_failed', 'no', [{ path: 'body.a', message: 'm' }]]);
    const f = validationFailed('params.id', 'too long');
    expect([...shape(f), f.issues]).toEqual([
      400,
      'validation_failed',
      'invalid params.id: too long',
      [{ path: 'params.id', message: 'too long' }],
    ]);
    expect(shape(forbidden('f'))).toEqual([403, 'forbidden', 'f']);
    expect(shape(notFound('n'))).toEqual([404, 'not_found', 'n']);
    const c = conflict('c', { who: 'x' });
    expect([...shape(c), c.details]).toEqual([409, 'conflict', 'c', { who: 'x' }]);
    const g = badGateway('g', { exit: 1 });
    expect([...shape(g), g.details]).toEqual([502, 'bad_gateway', 'g', { exit: 1 }]);
    expect(shape(internalError('req-9'))).toEqual([
      500,
      'internal',
      'internal error; see the server log for request req-9',
    ]);
  });
});

describe('issues', () => {
  it('issuesOf joins the location and the path; an empty path is the location, nothing is (root)', () => {
    expect(
      issuesOf('body', {
        issues: [
          { path: ['a', 0, 'b'], message: 'm1' },
          { path: [], message: 'm2' },
        ],
      }),
    ).toEqual([
      { path: 'body.a.0.b', message: 'm1' },
      { path: 'body', message: 'm2' },
    ]);
    expect(issuesOf('', { issues: [{ path: [], message: 'm' }] })).toEqual([{ path: '(root)', message: 'm' }]);
    expect(issuesOf('', { issues: [{ path: ['x', ''], message: 'm' }] })).toEqual([{ path: 'x', message: 'm' }]);
  });
  it('issuesText: path: message, joined by "; "', () => {
    expect(
      issuesText([
        { path: 'a', message: 'one' },
        { path: 'b.c', message: 'two' },
      ]),
    ).toBe('a: one; b.c: two');
    expect(issuesText([])).toBe('');
  });
});

describe('toApiError', () => {
  it('an ApiError is itself', () => {
    const e = notFound('x');
    expect(toApiError(e, 'r')).toBe(e);
  });
  it("a parser's failure is a 502 naming the parser and line, never its message", () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const e = toApiError(new ParseError('ss', 'secret detail', 3), 'r-2');
    expect(shape(e)).toEqual([502, 'bad_gateway', 'could not read the output of ss (line 3)']);
    expect(shape(toApiError(new ParseError('ip', 'x'), 'r-2'))).toEqual([
      502,
      'bad_gateway',
      'could not read the output of ip',
    ]);
    expect(shape(toApiError(new ParseError('ip', 'x', 0), 'r-2'))).toEqual([
      502,
      'bad_gateway',
      'could not read the output of ip (line 0)',
    ]);
    expect(String(log.mock.calls[0][0])).toContain('[r-2] parse error:');
  });
  it('anything else is a 500 naming only the request id; the error goes to the log', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const e = toApiError(new Error('password=hunter2'), 'r-3');
    expect(shape(e)).toEqual([500, 'internal', 'internal error; see the server log for request r-3']);
    expect(log.mock.calls[0][0]).toBe('[r-3] unexpected error:');
    expect(String(log.mock.calls[0][1])).toContain('hunter2');
  });
});
