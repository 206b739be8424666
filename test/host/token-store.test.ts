/**
 * runtime/tokens.ts on its own (#35): what a created token is, who may be created, what list and
 * revoke do, and the request path's cache (a revocation takes effect at the next request, from
 * this process or another one), on real SQLite databases.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sha256Hex, TOKEN_PATTERN } from '../../handlers/core/auth';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import {
  createToken,
  hasLiveTokens,
  listTokens,
  MAX_TOKEN_DAYS,
  parseExpiry,
  permissionAreas,
  revokeToken,
  TokenCache,
} from '../../runtime/tokens';
import { privateDir } from '../helpers/tmp';

const DAY = 86_400_000;
const dbs: SqliteDb[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const d of dbs.splice(0)) d.close();
});
const open = (file = ':memory:') => {
  const d = openDatabase(file);
  dbs.push(d);
  return d;
};

describe('createToken', () => {
  it('stores the hash of the secret, never the secret; the token matches the pattern', async () => {
    const db = open();
    const before = Date.now();
    const { id, token } = await createToken(db, 'ops.team@x-1', ['fs:read', 'pod:manage'], null);
    const m = TOKEN_PATTERN.exec(token)!;
    expect(m[1]).toBe(id);
    const row = db.prepare('SELECT * FROM api_tokens WHERE id = ?').get(id) as Record<string, unknown>;
    expect(row).toMatchObject({
      name: 'ops.team@x-1',
      hash: await sha256Hex(m[2]),
      permissions: '["fs:read","pod:manage"]',
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    });
    expect(row.created_at as number).toBeGreaterThanOrEqual(before);
    expect(row.created_at as number).toBeLessThanOrEqual(Date.now());
    expect(JSON.stringify(row)).not.toContain(m[2]);
    const other = await createToken(db, 'b', ['*']);
    expect(other.id).not.toBe(id);
    expect(other.token).not.toBe(token);
  });

  it('names: a letter or digit first, then up to 63 of [A-Za-z0-9_.@-]', async () => {
    const db = open();
    const ok = ['a', '9', 'A'.repeat(64), 'a_b.c@d-e'];
    for (const n of ok) expect((await createToken(db, n, ['*'])).id).toMatch(/^[0-9a-f]{12}$/);
    for (const n of ['', '_a', '.a', 'a'.repeat(65), 'a b', 'a/b', 'a:b', 'é'])
      await expect(createToken(db, n, ['*'])).rejects.toThrow('token name must match');
    await expect(createToken(db, 'a', ['*'])).rejects.toThrow('a token named a already exists');
  });

  it('permissions: at least one, each well-formed and of a known area when areas are given', async () => {
    const db = open();
    await expect(createToken(db, 'p', [])).rejects.toThrow('a token needs at least one permission');
    await expect(createToken(db, 'p', ['fs:write'])).rejects.toThrow(
      'bad permission fs:write: use <area>:read, <area>:manage or *',
    );
    await expect(createToken(db, 'p', ['fs:read', 'nope:read'], null, ['fs', 'pod'])).rejects.toThrow(
      'bad permission nope:read: no route has area nope (areas: fs, pod)',
    );
    expect((await createToken(db, 'p', ['*', 'pod:read'], null, ['fs', 'pod'])).id).toHaveLength(12);
    expect(listTokens(db)).toHaveLength(1);
  });

  it('expiry: strictly in the future, at most MAX_TOKEN_DAYS ahead', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_800_000_000_000 });
    const now = Date.now();
    const db = open();
    await expect(createToken(db, 'e1', ['*'], now)).rejects.toThrow('expiry must be in the future');
    await expect(createToken(db, 'e2', ['*'], now - 1)).rejects.toThrow('expiry must be in the future');
    expect((await createToken(db, 'e3', ['*'], now + 1)).id).toHaveLength(12);
    expect((await createToken(db, 'e4', ['*'], now + MAX_TOKEN_DAYS * DAY)).id).toHaveLength(12);
    await expect(createToken(db, 'e5', ['*'], now + MAX_TOKEN_DAYS * DAY + 1)).rejects.toThrow(
      `expiry must be at most ${MAX_TOKEN_DAYS} days (10 years) ahead`,
    );
    await expect(createToken(db, 'e6', ['*'], Number.NaN)).rejects.toThrow('at most 3650 days');
    expect(listTokens(db).map((t) => [t.name, t.expiresAt])).toEqual([
      ['e3', new Date(now + 1).toISOString()],
      ['e4', new Date(now + MAX_TOKEN_DAYS * DAY).toISOString()],
    ]);
  });
});

describe('list, revoke, live tokens', () => {
  it('lists in creation order with times as ISO text; revoke by id or name, once', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_800_000_000_000 });
    const db = open();
    expect(hasLiveTokens(db)).toBe(false);
    const a = await createToken(db, 'a', ['fs:read']);
    vi.setSystemTime(1_800_000_001_000);
    const b = await createToken(db, 'b', ['*'], 1_800_000_100_000);
    expect(hasLiveTokens(db)).toBe(true);
    vi.setSystemTime(1_800_000_002_000);
    expect(revokeToken(db, 'a')).toBe(true);
    expect(revokeToken(db, a.id)).toBe(false);
    expect(revokeToken(db, 'nobody')).toBe(false);
    expect(hasLiveTokens(db)).toBe(true);
    expect(listTokens(db)).toEqual([
      {
        id: a.id,
        name: 'a',
        permissions: ['fs:read'],
        createdAt: '2027-01-15T08:00:00.000Z',
        expiresAt: null,
        revokedAt: '2027-01-15T08:00:02.000Z',
        lastUsedAt: null,
      },
      {
        id: b.id,
        name: 'b',
        permissions: ['*'],
        createdAt: '2027-01-15T08:00:01.000Z',
        expiresAt: '2027-01-15T08:01:40.000Z',
        revokedAt: null,
        lastUsedAt: null,
      },
    ]);
    expect(revokeToken(db, b.id)).toBe(true);
    expect(hasLiveTokens(db)).toBe(false);
  });

  it('a row no Date or JSON can hold is shown raw, not dropped', async () => {
    const db = open();
    await createToken(db, 'x', ['*']);
    db.prepare("UPDATE api_tokens SET permissions = '[1]', last_used_at = 9e15, created_at = 'soon'").run();
    const [t] = listTokens(db);
    expect([t.permissions, t.lastUsedAt, t.createdAt]).toEqual([
      ['invalid ([1])'],
      'invalid (9000000000000000)',
      'invalid (soon)',
    ]);
    db.prepare("UPDATE api_tokens SET permissions = '{'").run();
    expect(listTokens(db)[0].permissions).toEqual(['invalid ({)']);
    db.prepare('UPDATE api_tokens SET permissions = \'["*",2]\'').run();
    expect(listTokens(db)[0].permissions).toEqual(['invalid (["*",2])']);
  });
});

describe('permissionAreas', () => {
  it("the areas of the routes' permissions, sorted, once each; * and malformed ones add none", () => {
    expect(
      permissionAreas([
        { permission: 'pod:read' },
        { permission: 'fs:manage' },
        { permission: 'pod:manage' },
        { permission: '*' },
        { permission: 'bad' },
      ]),
    ).toEqual(['fs', 'pod']);
  });
});

describe('parseExpiry', () => {
  it('30d, 12h, 15m from now, or an ISO date', () => {
    const now = 1_000_000;
    expect(parseExpiry('30d', now)).toBe(now + 30 * DAY);
    expect(parseExpiry('12h', now)).toBe(now + 12 * 3_600_000);
    expect(parseExpiry('15m', now)).toBe(now + 15 * 60_000);
    expect(parseExpiry('2030-01-01T00:00:00Z', now)).toBe(Date.UTC(2030, 0, 1));
    for (const bad of ['30', 'd', '30w', 'soon', ''])
      expect(() => parseExpiry(bad, now)).toThrow(`bad expiry ${bad}: use 30d, 12h, 15m or an ISO date`);
    // a unit must end the text: `30d` inside a longer word is not a duration
    expect(() => parseExpiry('x30d', now)).toThrow('bad expiry');
    expect(() => parseExpiry('30dx', now)).toThrow('bad expiry');
  });
});

describe('TokenCache', () => {
  it('reuses a row for ttlMs, then reads it again', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: 1_800_000_000_000 });
    const db = open();
    const { id } = await createToken(db, 'c', ['*']);
    const cache = new TokenCache(db, 1000);
    expect(cache.token(id)?.name).toBe('c');
    // an UPDATE through the same connection is not seen by data_version: only the ttl ends the row
    db.prepare("UPDATE api_tokens SET name = 'renamed' WHERE id = ?").run(id);
    vi.setSystemTime(1_800_000_000_999);
    expect(cache.token(id)?.name).toBe('c');
    vi.setSystemTime(1_800_000_001_000);
    expect(cache.token(id)?.name).toBe('renamed');
    expect(cache.token('000000000000')).toBeNull();
  });

  it('a revocation in this process is seen at once', async () => {
    const db = open();
    const { id } = await createToken(db, 'r', ['*']);
    const cache = new TokenCache(db, 60_000);
    expect(cache.token(id)?.revoked_at).toBeNull();
    revokeToken(db, 'r');
    expect(cache.token(id)?.revoked_at).toBeTypeOf('number');
  });

  it('a write by another connection (another process) empties the cache at the next lookup', async () => {
    const file = join(privateDir('token-cache'), 'ballast.db');
    const db = open(file);
    const { id } = await createToken(db, 'o', ['*']);
    const cache = new TokenCache(db, 60_000);
    expect(cache.token(id)?.revoked_at).toBeNull();
    const other = open(file);
    expect(revokeToken(other, id)).toBe(true);
    const now = cache.token(id)?.revoked_at;
    expect(typeof now === 'number' && now > 0).toBe(true);
  });

  it('touch records the use in the database and in the cached row', async () => {
    const db = open();
    const { id } = await createToken(db, 't', ['*']);
    const cache = new TokenCache(db, 60_000);
    cache.token(id);
    cache.touch(id, 12345);
    expect(cache.token(id)?.last_used_at).toBe(12345);
    expect(db.prepare('SELECT last_used_at FROM api_tokens WHERE id = ?').pluck().get(id)).toBe(12345);
    cache.touch('000000000000', 1);
  });

  it('with ttlMs 0 nothing is kept: every lookup reads the row', async () => {
    const db = open();
    const { id } = await createToken(db, 'z', ['*']);
    const cache = new TokenCache(db, 0);
    expect(cache.token(id)?.name).toBe('z');
    db.prepare("UPDATE api_tokens SET name = 'z2' WHERE id = ?").run(id);
    expect(cache.token(id)?.name).toBe('z2');
  });

  it('past 1024 rows the cache starts over (a kept row is read again)', async () => {
    const db = open();
    const { id } = await createToken(db, 'k', ['*']);
    const cache = new TokenCache(db, 60_000);
    cache.token(id);
    db.prepare("UPDATE api_tokens SET name = 'k2' WHERE id = ?").run(id);
    for (let i = 0; i < 1023; i++) cache.token(i.toString(16).padStart(12, '0'));
    expect(cache.token(id)?.name).toBe('k');
    cache.token('ffffffffffff');
    expect(cache.token(id)?.name).toBe('k2');
  });
});
