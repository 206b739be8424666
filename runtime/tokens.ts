import { randomBytes } from 'node:crypto';
import { PERMISSION_PATTERN, sha256Hex } from '../handlers/core/auth';
import type { SqliteDb } from './db/database';

export interface TokenInfo {
  id: string;
  name: string;
  permissions: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Creates a token and returns it in clear: the only time it is ever shown. */
export async function createToken(
  db: SqliteDb,
  name: string,
  permissions: string[],
  expiresAt: number | null = null,
): Promise<{ id: string; token: string }> {
  if (!NAME_PATTERN.test(name)) throw new Error(`token name must match ${NAME_PATTERN}`);
  if (permissions.length === 0) throw new Error('a token needs at least one permission');
  for (const p of permissions)
    if (!PERMISSION_PATTERN.test(p)) throw new Error(`bad permission ${p}: use <area>:read, <area>:manage or *`);
  if (expiresAt !== null && expiresAt <= Date.now()) throw new Error('expiry must be in the future');
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const hash = await sha256Hex(secret);
  try {
    db.prepare(
      'INSERT INTO api_tokens (id, name, hash, permissions, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(id, name, hash, JSON.stringify(permissions), Date.now(), expiresAt);
  } catch (e) {
    if (String(e).includes('UNIQUE')) throw new Error(`a token named ${name} already exists`);
    throw e;
  }
  return { id, token: `blt_${id}_${secret}` };
}

export function listTokens(db: SqliteDb): TokenInfo[] {
  const rows = db
    .prepare(
      'SELECT id, name, permissions, created_at, expires_at, revoked_at, last_used_at FROM api_tokens ORDER BY created_at',
    )
    .all() as {
    id: string;
    name: string;
    permissions: string;
    created_at: number;
    expires_at: number | null;
    revoked_at: number | null;
    last_used_at: number | null;
  }[];
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    permissions: JSON.parse(r.permissions) as string[],
    createdAt: new Date(r.created_at).toISOString(),
    expiresAt: iso(r.expires_at),
    revokedAt: iso(r.revoked_at),
    lastUsedAt: iso(r.last_used_at),
  }));
}

/** Revokes by id or name; returns whether a live token was revoked. */
export function revokeToken(db: SqliteDb, idOrName: string): boolean {
  const r = db
    .prepare('UPDATE api_tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL')
    .run(Date.now(), idOrName, idOrName);
  return r.changes > 0;
}

export function hasLiveTokens(db: SqliteDb): boolean {
  return db.prepare('SELECT 1 FROM api_tokens WHERE revoked_at IS NULL LIMIT 1').get() !== undefined;
}

/** `30d`, `12h`, `15m` or an ISO date → epoch ms. */
export function parseExpiry(text: string, now = Date.now()): number {
  const m = /^(\d+)([dhm])$/.exec(text);
  if (m) return now + Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'];
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new Error(`bad expiry ${text}: use 30d, 12h, 15m or an ISO date`);
  return t;
}
