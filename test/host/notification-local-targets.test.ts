/**
 * Webhook targets on this machine or its link (loopback, link-local, unspecified) are refused
 * unless settings.notification.allowLocalTargets: by the routes for literal addresses and
 * localhost, and by the sender for names that resolve to such an address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLocalAddress, isLocalHost } from '../../handlers/notification/local-target';
import agentCreate from '../../handlers/notification/routes/agent-create';
import agentUpdate from '../../handlers/notification/routes/agent-update';
import { LocalTargetError, refusingLocal } from '../../runtime/areas/notification/http-post';
import { makeTestHost, type TestHost } from '../helpers/host';

describe('what counts as local', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '0.0.0.0',
    '169.254.169.254',
    '::1',
    '[::1]',
    '::',
    '0:0:0:0:0:0:0:0',
    '0::0',
    'fe80::1',
    'FEBF::2',
    '::ffff:127.0.0.1',
    '::ffff:169.254.1.1',
  ])('%s is local', (a) => {
    expect(isLocalAddress(a)).toBe(true);
  });
  it.each(['10.0.0.1', '192.168.1.1', '8.8.8.8', '2001:db8::1', 'fc00::1', '::ffff:10.1.2.3', '172.16.0.1'])(
    '%s is not',
    (a) => {
      expect(isLocalAddress(a)).toBe(false);
    },
  );
  it('reads a long run of 0s and colons in linear time (the pattern was quadratic: 50k zeros took 3 s)', () => {
    expect(isLocalAddress(`${'0'.repeat(200_000)}x`)).toBe(false);
    expect(isLocalAddress(`${'0:'.repeat(100_000)}0`)).toBe(true);
    expect(isLocalAddress('0:0:0:0:0:0:0:2')).toBe(false);
  });
  it('localhost names are local without DNS', () => {
    expect(['localhost', 'LOCALHOST.', 'api.localhost'].map(isLocalHost)).toEqual([true, true, true]);
    expect(isLocalHost('hooks.example.com')).toBe(false);
  });
  it('the sender refuses a name that resolves to a local address', async () => {
    const err = await new Promise<unknown>((resolve) => refusingLocal('localhost', {}, (e) => resolve(e)));
    expect(err).toBeInstanceOf(LocalTargetError);
  });
});

describe('routes', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await makeTestHost({ routes: [agentCreate, agentUpdate] });
  });
  afterAll(() => t.close());
  const create = (url: string) =>
    t.call('POST', '/api/v2/notification/agent/create', { body: { type: 'webhook', enabled: true, json: { url } } });

  it.each([
    'http://127.0.0.1:9000/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'https://localhost/x',
    'http://0.0.0.0/',
  ])('%s is a 400 naming body.json.url', async (url) => {
    const r = await create(url);
    expect(r.status).toBe(400);
    const error = (r.json as { error: { issues: { path: string; message: string }[] } }).error;
    expect(error.issues[0].path).toBe('body.json.url');
    expect(error.issues[0].message).toMatch(/loopback, link-local or unspecified address/);
  });

  it('an update to a local URL is refused too; another machine is fine', async () => {
    const ok = await create('https://hooks.example.com/ballast');
    expect(ok.status).toBe(200);
    const id = (ok.json as { id: number }[])[0].id;
    const r = await t.call('POST', `/api/v2/notification/agent/${id}/update`, {
      body: { json: { url: 'http://127.0.0.1/' } },
    });
    expect(r.status).toBe(400);
  });
});
