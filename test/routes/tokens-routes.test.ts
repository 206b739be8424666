/**
 * Tokens over HTTP (issue 29): a token never mints or revokes more than it holds, permissions
 * name known areas, expiries are bounded (and never past the caller's), the secret is shown in
 * the create answer only, and a revoked token fails at its next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../runtime/tokens';
import { errorOf } from '../helpers/answers';
import { makeTestHost, type TestHost } from '../helpers/host';

let t: TestHost;
let netAdmin: string;
beforeAll(async () => {
  t = await makeTestHost();
  netAdmin = await t.token(['network:manage', 'tokens:manage'], 'net-admin');
});
afterAll(() => t.close());

const create = (body: unknown, token = netAdmin) => t.call('POST', '/api/v2/tokens', { body, token });
const DAY = 86_400_000;

describe('POST /tokens', () => {
  it.each([[['*']], [['pod:manage']], [['network:read', 'fs:read']], [['*', 'network:read']]])(
    'a network:manage + tokens:manage token cannot mint %j (403)',
    async (permissions) => {
      const r = await create({ name: `x${permissions.length}${permissions[0].length}`, permissions });
      expect(r.status, r.text).toBe(403);
      expect(errorOf(r).message).toMatch(/cannot grant (\*|pod:manage|fs:read)/);
      expect(t.host.db.prepare("SELECT count(*) FROM api_tokens WHERE name LIKE 'x%'").pluck().get()).toBe(0);
    },
  );

  it('mints what it holds (manage implies read), and the new token works at once', async () => {
    const r = await create({ name: 'net-reader', permissions: ['network:read', 'tokens:manage'], expiresInDays: 7 });
    expect(r.status, r.text).toBe(200);
    const made = r.json as { id: string; token: string; expiresAt: string; permissions: string[] };
    expect(made.token).toMatch(new RegExp(`^blt_${made.id}_[A-Za-z0-9_-]{43}$`));
    expect(Math.abs(Date.parse(made.expiresAt) - (Date.now() + 7 * DAY))).toBeLessThan(60_000);
    expect((await t.call('GET', '/api/v2/tokens', { token: made.token })).status).toBe(200);
    expect((await t.call('GET', '/api/v2/audit', { token: made.token })).status).toBe(403);
  });

  it('shows the secret in the create answer only: the list has neither it nor its hash', async () => {
    const made = (await create({ name: 'shown-once', permissions: ['network:read'] })).json as { token: string };
    const list = await t.call('GET', '/api/v2/tokens');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(made.token.slice(17));
    expect(list.text).not.toMatch(/"hash"|[0-9a-f]{64}/);
    expect((list.json as { name: string; state: string }[]).find((x) => x.name === 'shown-once')?.state).toBe('live');
  });

  it('refuses a permission naming no area (400), as the CLI does', async () => {
    const r = await create({ name: 'typo', permissions: ['nosucharea:read'] }, t.adminToken);
    expect(r.status).toBe(400);
    expect(errorOf(r).message).toMatch(/no route has area nosucharea/);
  });

  it('bounds the expiry: at most 365 days, never after the calling token', async () => {
    expect((await create({ name: 'long', permissions: ['network:read'], expiresInDays: 366 })).status).toBe(400);
    const short = (
      await createToken(t.host.db, 'short-lived', ['network:manage', 'tokens:manage'], Date.now() + 10 * DAY)
    ).token;
    const over = await create({ name: 'outlives', permissions: ['network:read'], expiresInDays: 30 }, short);
    expect([over.status, errorOf(over).message]).toEqual([400, expect.stringMatching(/outlive the calling token/)]);
    // without a stated expiry the default (90 days) is cut to the caller's
    const cut = (await create({ name: 'cut', permissions: ['network:read'] }, short)).json as { expiresAt: string };
    expect(Date.parse(cut.expiresAt)).toBeLessThanOrEqual(Date.now() + 10 * DAY);
  });

  it('refuses a name taken (409) and unknown body fields (400)', async () => {
    expect((await create({ name: 'net-admin', permissions: ['network:read'] })).status).toBe(409);
    expect((await create({ name: 'y', permissions: ['network:read'], admin: true })).status).toBe(400);
  });
});

describe('POST /tokens/:id/revoke', () => {
  it('cannot revoke a token holding more than the caller (the admin)', async () => {
    const r = await t.call('POST', '/api/v2/tokens/admin/revoke', { token: netAdmin });
    expect([r.status, errorOf(r).message]).toEqual([403, 'the calling token cannot revoke a token holding *']);
  });

  it('revokes by id or name; the revoked token is refused at its next request', async () => {
    const made = (await create({ name: 'to-revoke', permissions: ['network:read'] })).json as {
      id: string;
      token: string;
    };
    expect((await t.call('GET', '/api/v2/tokens', { token: netAdmin })).status).toBe(200);
    const r = await t.call('POST', `/api/v2/tokens/${made.id}/revoke`, { token: netAdmin });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: made.id, name: 'to-revoke' });
    const after = await t.call('GET', '/api/v2/network/interface', { token: made.token });
    expect([after.status, errorOf(after).message]).toEqual([401, 'token revoked']);
    expect((await t.call('POST', '/api/v2/tokens/to-revoke/revoke', { token: netAdmin })).status).toBe(404);
  });

  it('needs tokens:manage', async () => {
    const reader = await t.token(['tokens:read'], 'tokens-reader');
    expect((await t.call('POST', '/api/v2/tokens/net-admin/revoke', { token: reader })).status).toBe(403);
    expect((await t.call('GET', '/api/v2/tokens', { token: reader })).status).toBe(200);
  });
});
