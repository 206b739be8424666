/**
 * handlers/core/auth.ts on its own (#35): the token check a root service's every route goes
 * through, each edge a one-character change would move: the secret, revocation, expiry at the
 * exact millisecond, the last-use record's granularity, the permission rule.
 */
import { describe, expect, it } from 'vitest';
import {
  authenticate,
  authorize,
  constantTimeEqual,
  hasPermission,
  PERMISSION_PATTERN,
  sha256Hex,
  TOKEN_PATTERN,
  TOKEN_ROW_SQL,
  TOKEN_TOUCH_SQL,
  type TokenRow,
} from '../../handlers/core/auth';
import type { D1Database, TokenLookup } from '../../handlers/core/bindings';
import { ApiError } from '../../handlers/core/errors';

const ID = '0123456789ab';
const SECRET = 'S'.repeat(42) + 'x';
const TOKEN = `blt_${ID}_${SECRET}`;
const NOW = 1_700_000_000_000;

async function row(o: Partial<TokenRow> = {}): Promise<TokenRow> {
  return {
    id: ID,
    name: 'ops',
    hash: await sha256Hex(SECRET),
    permissions: '["pod:read"]',
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    ...o,
  };
}

/** A lookup that records what it was asked and the touches. */
function lookupOf(r: TokenRow | null) {
  const asked: string[] = [];
  const touched: [string, number][] = [];
  const lookup: TokenLookup = {
    token: (id) => (asked.push(id), r),
    touch: (id, at) => void touched.push([id, at]),
  };
  return { lookup, asked, touched };
}

/** A D1 double answering TOKEN_ROW_SQL with `r` and recording every statement run. */
function d1Of(r: TokenRow | null) {
  const ran: { sql: string; values: unknown[]; how: string }[] = [];
  const db = {
    prepare(sql: string) {
      return {
        bind: (...values: unknown[]) => ({
          first: async () => (ran.push({ sql, values, how: 'first' }), sql === TOKEN_ROW_SQL ? r : null),
          run: async () => (ran.push({ sql, values, how: 'run' }), { success: true }),
        }),
      };
    },
  } as unknown as D1Database;
  return { db, ran };
}

async function refusal(p: Promise<unknown>): Promise<[number, string, string]> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ApiError);
  const a = e as ApiError;
  return [a.status, a.code, a.message];
}

describe('authenticate', () => {
  it('the right secret gives the principal with its permissions', async () => {
    const { lookup, asked } = lookupOf(await row());
    expect(await authenticate({} as D1Database, TOKEN, NOW, lookup)).toEqual({
      tokenId: ID,
      name: 'ops',
      permissions: ['pod:read'],
    });
    expect(asked).toEqual([ID]);
  });

  it('surrounding whitespace is trimmed', async () => {
    const { lookup } = lookupOf(await row());
    expect((await authenticate({} as D1Database, `  ${TOKEN}\n`, NOW, lookup)).tokenId).toBe(ID);
  });

  it('a known id with any other secret is 401 invalid token', async () => {
    const { lookup } = lookupOf(await row());
    for (const secret of ['S'.repeat(42) + 'y', 'T' + 'S'.repeat(41) + 'x', 'S'.repeat(43)])
      expect(await refusal(authenticate({} as D1Database, `blt_${ID}_${secret}`, NOW, lookup))).toEqual([
        401,
        'unauthorized',
        'invalid token',
      ]);
  });

  it('no header, a malformed token or an unknown id: 401 with the reason', async () => {
    const { lookup } = lookupOf(null);
    const db = {} as D1Database;
    expect(await refusal(authenticate(db, null, NOW, lookup))).toEqual([401, 'unauthorized', 'missing token header']);
    expect(await refusal(authenticate(db, '', NOW, lookup))).toEqual([401, 'unauthorized', 'missing token header']);
    for (const bad of [
      'nope',
      `xblt_${ID}_${SECRET}`,
      `blt_${ID}_${SECRET}x`,
      `blt_${ID}_${SECRET.slice(1)}`,
      `blt_${ID.toUpperCase()}_${SECRET}`,
      `blt_${ID}0_${SECRET}`,
      `blt_${ID}_${SECRET.slice(1)}=`,
    ])
      expect([bad, ...(await refusal(authenticate(db, bad, NOW, lookup)))]).toEqual([
        bad,
        401,
        'unauthorized',
        'invalid token',
      ]);
    expect(await refusal(authenticate(db, TOKEN, NOW, lookup))).toEqual([401, 'unauthorized', 'invalid token']);
    // the pattern is anchored: a valid token inside a longer header is no token, even for a known id
    const known = lookupOf(await row()).lookup;
    for (const bad of [`x${TOKEN}`, `${TOKEN}x`, `${TOKEN} ${TOKEN}`])
      expect([bad, ...(await refusal(authenticate(db, bad, NOW, known)))]).toEqual([
        bad,
        401,
        'unauthorized',
        'invalid token',
      ]);
  });

  it('the token pattern: 12 lower-case hex digits, 43 base64url characters', () => {
    expect(TOKEN_PATTERN.exec(TOKEN)?.slice(1)).toEqual([ID, SECRET]);
    expect(TOKEN_PATTERN.test(`blt_${ID}_${'-_aZ09'.repeat(7)}a`)).toBe(true);
  });

  it('revoked: 401 token revoked, even with the right secret', async () => {
    const { lookup } = lookupOf(await row({ revoked_at: NOW - 1 }));
    expect(await refusal(authenticate({} as D1Database, TOKEN, NOW, lookup))).toEqual([
      401,
      'unauthorized',
      'token revoked',
    ]);
  });

  it('expired at exactly now is expired; a millisecond later it is not yet', async () => {
    const at = (expires_at: number) => lookupOf({ ...base, expires_at }).lookup;
    const base = await row();
    expect(await refusal(authenticate({} as D1Database, TOKEN, NOW, at(NOW)))).toEqual([
      401,
      'unauthorized',
      'token expired',
    ]);
    expect(await refusal(authenticate({} as D1Database, TOKEN, NOW, at(NOW - 1)))).toEqual([
      401,
      'unauthorized',
      'token expired',
    ]);
    expect((await authenticate({} as D1Database, TOKEN, NOW, at(NOW + 1))).tokenId).toBe(ID);
  });

  it('records a use when never used or last used more than a minute ago, not more often', async () => {
    const touches = async (last_used_at: number | null) => {
      const l = lookupOf(await row({ last_used_at }));
      await authenticate({} as D1Database, TOKEN, NOW, l.lookup);
      return l.touched;
    };
    expect(await touches(null)).toEqual([[ID, NOW]]);
    expect(await touches(NOW - 60_001)).toEqual([[ID, NOW]]);
    expect(await touches(NOW - 60_000)).toEqual([]);
    expect(await touches(NOW - 1)).toEqual([]);
  });

  it('without a lookup: one query for the row, and the touch through the database', async () => {
    const { db, ran } = d1Of(await row());
    expect((await authenticate(db, TOKEN, NOW)).permissions).toEqual(['pod:read']);
    expect(ran).toEqual([
      { sql: TOKEN_ROW_SQL, values: [ID], how: 'first' },
      { sql: TOKEN_TOUCH_SQL, values: [NOW, ID], how: 'run' },
    ]);
    const other = d1Of(await row({ hash: await sha256Hex('other') }));
    expect(await refusal(authenticate(other.db, TOKEN, NOW))).toEqual([401, 'unauthorized', 'invalid token']);
    expect(other.ran.map((r) => r.how)).toEqual(['first']);
  });

  it('permissions that are not JSON are none', async () => {
    const { lookup } = lookupOf(await row({ permissions: '{not json' }));
    expect((await authenticate({} as D1Database, TOKEN, NOW, lookup)).permissions).toEqual([]);
  });

  it('the hash of a secret seen before is the same (the cache), and of another secret differs', async () => {
    const r = await row();
    for (let i = 0; i < 300; i++) {
      const s = `${'k'.repeat(40)}${String(i).padStart(3, '0')}`;
      const l = lookupOf({ ...r, hash: await sha256Hex(s) });
      expect((await authenticate({} as D1Database, `blt_${ID}_${s}`, NOW, l.lookup)).tokenId).toBe(ID);
    }
    // past the cache's size, the first secrets are hashed again and still match
    const l = lookupOf(r);
    expect((await authenticate({} as D1Database, TOKEN, NOW, l.lookup)).tokenId).toBe(ID);
  });
});

describe('sha256Hex and constantTimeEqual', () => {
  it('sha256Hex is the hex digest, 64 lower-case digits', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
  it('equal only when every character is', () => {
    expect(constantTimeEqual('abcd', 'abcd')).toBe(true);
    expect(constantTimeEqual('', '')).toBe(true);
    expect(constantTimeEqual('abcd', 'abce')).toBe(false);
    expect(constantTimeEqual('abcd', 'xbcd')).toBe(false);
    expect(constantTimeEqual('abcd', 'abc')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('permissions', () => {
  it('* grants everything; x:manage implies x:read, not the other way, nor another area', () => {
    expect(hasPermission(['*'], 'fs:manage')).toBe(true);
    expect(hasPermission(['fs:read'], 'fs:read')).toBe(true);
    expect(hasPermission(['fs:manage'], 'fs:read')).toBe(true);
    expect(hasPermission(['fs:manage'], 'fs:manage')).toBe(true);
    expect(hasPermission(['fs:read'], 'fs:manage')).toBe(false);
    expect(hasPermission(['pod:manage'], 'fs:read')).toBe(false);
    expect(hasPermission(['pod:manage'], 'fs:manage')).toBe(false);
    expect(hasPermission([], 'fs:read')).toBe(false);
  });
  it('authorize: 403 naming the permission', () => {
    expect(() => authorize({ tokenId: ID, name: 'n', permissions: ['fs:manage'] }, 'fs:read')).not.toThrow();
    let e: unknown;
    try {
      authorize({ tokenId: ID, name: 'n', permissions: ['fs:read'] }, 'fs:manage');
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(ApiError);
    expect([(e as ApiError).status, (e as ApiError).code, (e as ApiError).message]).toEqual([
      403,
      'forbidden',
      'token lacks permission fs:manage',
    ]);
  });
  it('the permission pattern: * or <area>:read|manage, nothing around it', () => {
    for (const p of ['*', 'fs:read', 'pod:manage', 'a1:read'])
      expect([p, PERMISSION_PATTERN.test(p)]).toEqual([p, true]);
    for (const p of ['**', 'fs:write', 'Fs:read', '1fs:read', 'fs:reads', 'xfs:read ', ' *', 'fs-x:read', ':read'])
      expect([p, PERMISSION_PATTERN.test(p)]).toEqual([p, false]);
  });
});
