/**
 * What the host's request observer names for a call no in-process route noted (isolation mode):
 * the route, by the matcher, and the token, from the row the forwarder looked up or by the id
 * in the header, never for a call the isolate refused.
 */
import { describe, expect, it } from 'vitest';
import { requestObserver, routeMatcher } from '../../runtime/ops/request-log';
import type { Call } from '../../handlers/core/pipeline';
import type { TokenRecord } from '../../handlers/core/bindings';

describe('routeMatcher', () => {
  const match = routeMatcher([
    { method: 'GET', path: '/api/v2/pod/:name' },
    { method: 'GET', path: '/api/v2/pod/list' },
    { method: 'GET', path: '/api/v2/fs/available_fs' },
    { method: 'GET', path: '/api/v2/fs/:id/usage' },
    { method: 'GET', path: '/api/v2/fs/list.json' },
    { method: 'POST', path: '/api/v2/pod/list' },
    { method: 'DELETE', path: '/api/v2/fs/:id' },
    { method: 'GET', path: '/api/v2/fs/available_fs' },
  ]);

  it('picks the first matching route in manifest order, as the router does', () => {
    // the pattern comes before the exact path: it wins, as it does in-process
    expect(match('GET', '/api/v2/pod/list')).toBe('/api/v2/pod/:name');
    expect(match('GET', '/api/v2/pod/web')).toBe('/api/v2/pod/:name');
    // the exact path comes before the pattern that would also match it
    expect(match('GET', '/api/v2/fs/available_fs')).toBe('/api/v2/fs/available_fs');
    expect(match('GET', '/api/v2/fs/x1/usage')).toBe('/api/v2/fs/:id/usage');
  });

  it('by method: HEAD as GET, another method its own routes, an unknown one nothing', () => {
    expect(match('HEAD', '/api/v2/pod/web')).toBe('/api/v2/pod/:name');
    expect(match('POST', '/api/v2/pod/list')).toBe('/api/v2/pod/list');
    expect(match('POST', '/api/v2/pod/web')).toBeNull();
    expect(match('DELETE', '/api/v2/fs/x1')).toBe('/api/v2/fs/:id');
    expect(match('PATCH', '/api/v2/pod/web')).toBeNull();
  });

  it('a parameter is one segment, and a pattern is literal otherwise', () => {
    expect(match('GET', '/api/v2/pod/a/b')).toBeNull();
    expect(match('GET', '/api/v2/pod/')).toBeNull();
    expect(match('DELETE', '/api/v2/fs/a/b')).toBeNull();
    expect(match('GET', '/api/v2/fs/list.json')).toBe('/api/v2/fs/list.json');
    expect(match('GET', '/api/v2/fs/listxjson')).toBeNull();
    expect(match('GET', '/api/v2/fs/available_fs/')).toBeNull();
    expect(match('GET', '/api/v2/fs/available_fs\n')).toBeNull();
  });
});

describe('the token a request line names', () => {
  const ID = '0123456789ab';
  const header = `blt_${ID}_${'A'.repeat(43)}`;
  const row = { id: ID, name: 'ops' } as TokenRecord;
  const lookups: string[] = [];
  const tokens = {
    token: (id: string) => {
      lookups.push(id);
      return id === ID ? row : null;
    },
    touch: () => undefined,
  };
  const audited: { note: string }[] = [];
  const observe = requestObserver({
    routes: [{ method: 'POST', path: '/api/v2/pod/:name/start' }],
    basePath: '/api/v2',
    tokens,
    audit: (r) => audited.push(r),
  });
  const call = (note: Call['note'], token: string | null = header): Call => ({
    method: 'POST',
    url: new URL('/api/v2/pod/web/start', 'http://x'),
    header: (n) => (n === 'token' ? token : null),
    connection: { remoteAddress: '10.0.0.9' },
    requestId: 'obs-00001',
    note,
  });
  const named = (c: Call, status: number) => {
    audited.length = 0;
    lookups.length = 0;
    observe({ call: c, status, ms: 1 });
    return JSON.parse(audited[0]!.note) as { token: unknown; route: unknown };
  };

  it('the row the forwarder looked up, without a second lookup', () => {
    expect(named(call({ presented: row }), 200)).toMatchObject({
      token: { id: ID, name: 'ops' },
      route: '/api/v2/pod/:name/start',
    });
    expect(lookups).toEqual([]);
    // the forwarder found no row: nobody is named, and nothing is looked up again
    expect(named(call({ presented: null }), 200).token).toBeNull();
    expect(lookups).toEqual([]);
  });

  it('without a forwarded row, the id in the header is looked up', () => {
    expect(named(call({}), 201).token).toEqual({ id: ID, name: 'ops' });
    expect(lookups).toEqual([ID]);
    expect(named(call({}, `blt_${'f'.repeat(12)}_${'A'.repeat(43)}`), 200).token).toBeNull();
    expect(named(call({}, null), 200).token).toBeNull();
  });

  it('a token the isolate refused (401, 403) is not named, however it was found', () => {
    for (const status of [401, 403]) {
      expect(named(call({ presented: row }), status).token).toBeNull();
      expect(named(call({}), status).token).toBeNull();
      expect(lookups).toEqual([]);
    }
    expect(named(call({ presented: row }), 404).token).toEqual({ id: ID, name: 'ops' });
  });

  it('what the route noted comes first (in-process)', () => {
    const noted = { route: '/api/v2/x', token: { id: 'bbbbbbbbbbbb', name: 'noted' }, presented: row };
    expect(named(call(noted), 403)).toMatchObject({ token: { id: 'bbbbbbbbbbbb', name: 'noted' }, route: '/api/v2/x' });
  });
});
