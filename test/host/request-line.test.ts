/**
 * The request line is written without pino's redaction (a tenth of the request path's CPU), so
 * maskedQuery must do what redaction did to the only field a client fills in: every key that
 * names a secret, and every key redaction names (`body`, `headers`…), masked; anything else kept.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, maskedQuery } from '../../runtime/ops/logger';
import { requestObserver } from '../../runtime/ops/request-log';
import type { Call } from '../../handlers/core/pipeline';

describe('maskedQuery', () => {
  it('masks the secret-naming keys and the keys redaction names, and keeps the rest in order', () => {
    const q = new URLSearchParams(
      'name=a&password=p&body=b&headers=h&apiKey=k&api_key=k2&authorization=z&my_secret=s&Token=t&passphrase=x&kind=1&kind=2&Body=B',
    );
    expect(maskedQuery(q)).toEqual({
      name: 'a',
      password: '***',
      body: '***',
      headers: '***',
      apiKey: '***',
      api_key: '***',
      authorization: '***',
      my_secret: '***',
      Token: '***',
      passphrase: '***',
      kind: ['1', '2'],
      // pino's paths are exact names: `Body` was never redacted, and is no secret key
      Body: 'B',
    });
    expect(maskedQuery(new URLSearchParams(''))).toBeUndefined();
  });
});

describe('the request line', () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const observe = requestObserver({
    logger,
    routes: [{ method: 'GET', path: '/api/v2/fs/explore' }],
    basePath: '/api/v2',
  });
  const call = (url: string): Call => ({
    method: 'GET',
    url: new URL(url, 'http://x'),
    header: () => null,
    connection: { remoteAddress: '10.0.0.9' },
    requestId: 'line-0001',
  });

  it('has every field, the masked query as maskedQuery makes it, and the same level names', () => {
    observe({ call: call('/api/v2/fs/explore?body=b&password=p&path=/srv'), status: 200, ms: 1.26 });
    observe({ call: call('/api/v2/fs/explore'), status: 502, ms: 3 });
    expect(lines.map(({ time, ...l }) => [typeof time, l])).toEqual([
      [
        'number',
        {
          level: 'info',
          reqId: 'line-0001',
          method: 'GET',
          path: '/api/v2/fs/explore',
          query: { body: '***', password: '***', path: '/srv' },
          status: 200,
          ms: 1.3,
          token: null,
          remote: '10.0.0.9',
          area: 'fs',
          route: '/api/v2/fs/explore',
          msg: 'request',
        },
      ],
      [
        'number',
        {
          level: 'error',
          reqId: 'line-0001',
          method: 'GET',
          path: '/api/v2/fs/explore',
          status: 502,
          ms: 3,
          token: null,
          remote: '10.0.0.9',
          area: 'fs',
          route: '/api/v2/fs/explore',
          msg: 'request',
        },
      ],
    ]);
  });

  it("the host's other lines are still redacted", () => {
    lines.length = 0;
    logger.info({ job: { password: 'p', body: 'b' }, secret: 's' }, 'other');
    expect(lines[0]).toMatchObject({ job: { password: '***', body: '***' }, secret: '***' });
  });
});
