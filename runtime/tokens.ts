import { randomBytes } from 'node:crypto';
import { PERMISSION_PATTERN, sha256Hex, TOKEN_ROW_SQL, TOKEN_TOUCH_SQL } from '../handlers/core/auth';
import type { TokenLookup, TokenRecord } from '../handlers/core/bindings';
import type { Database, SqliteDb } from './db/database';

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

/** The longest lifetime a token may be given: 10 years (`--expires 3650d`). */
export const MAX_TOKEN_DAYS = 3650;
const DAY_MS = 86_400_000;

/** The areas a permission may name: those some route declares a permission for (`dist/manifest.json`). */
export function permissionAreas(routes: readonly { permission: string }[]): string[] {
  const areas = new Set<string>();
  for (const r of routes)
    if (PERMISSION_PATTERN.test(r.permission) && r.permission !== '*') areas.add(r.permission.split(':')[0]);
  return [...areas].sort();
}

/**
 * Creates a token and returns it in clear: the only time it is ever shown. With `areas` (see
 * permissionAreas), a permission naming any other area is refused: it would grant nothing, and a
 * typo should not pass for a working token.
 */
export async function createToken(
  db: SqliteDb,
  name: string,
  permissions: string[],
  expiresAt: number | null = null,
  areas?: readonly string[],
): Promise<{ id: string; token: string }> {
  if (!NAME_PATTERN.test(name)) throw new Error(`token name must match ${NAME_PATTERN}`);
  if (permissions.length === 0) throw new Error('a token needs at least one permission');
  for (const p of permissions) {
    if (!PERMISSION_PATTERN.test(p)) throw new Error(`bad permission ${p}: use <area>:read, <area>:manage or *`);
    const area = p.split(':')[0];
    if (areas && p !== '*' && !areas.includes(area))
      throw new Error(`bad permission ${p}: no route has area ${area} (areas: ${areas.join(', ')})`);
  }
  const now = Date.now();
  if (expiresAt !== null && expiresAt <= now) throw new Error('expiry must be in the future');
  // a far expiry is no expiry, and past year 275760 it is no date at all (token list could not show it)
  if (expiresAt !== null && !(expiresAt <= now + MAX_TOKEN_DAYS * DAY_MS))
    throw new Error(`expiry must be at most ${MAX_TOKEN_DAYS} days (10 years) ahead`);
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
    permissions: permissionsText(r.permissions),
    createdAt: timeText(r.created_at),
    expiresAt: r.expires_at === null ? null : timeText(r.expires_at),
    revokedAt: r.revoked_at === null ? null : timeText(r.revoked_at),
    lastUsedAt: r.last_used_at === null ? null : timeText(r.last_used_at),
  }));
}

/*
 * A stored row is shown whatever it holds (a row an older version wrote, or one edited by hand):
 * one bad value must not hide the other tokens, nor the one that holds it (it may need revoking).
 */
function timeText(ms: unknown): string {
  const d = typeof ms === 'number' ? new Date(ms) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : `invalid (${String(ms)})`;
}

function permissionsText(json: string): string[] {
  try {
    const p: unknown = JSON.parse(json);
    if (Array.isArray(p) && p.every((x) => typeof x === 'string')) return p as string[];
  } catch {
    // shown raw below
  }
  return [`invalid (${json})`];
}

/** Revokes the live token with this id (not a token whose name is that text); returns whether one was. */
export function revokeTokenById(db: SqliteDb, id: string): boolean {
  const r = db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(Date.now(), id);
  caches.get(db)?.forget();
  return r.changes > 0;
}

/** Revokes by id or name; returns whether a live token was revoked. */
export function revokeToken(db: SqliteDb, idOrName: string): boolean {
  const r = db
    .prepare('UPDATE api_tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL')
    .run(Date.now(), idOrName, idOrName);
  // a revocation through this very connection (data_version does not see it): forget at once
  caches.get(db)?.forget();
  return r.changes > 0;
}

/** The token cache of each open connection, so a revocation in this process empties it. */
const caches = new WeakMap<SqliteDb, TokenCache>();
/** Unknown ids are remembered too (a miss costs a query); past this many rows the cache starts over. */
const TOKEN_CACHE_MAX_ROWS = 1024;

/**
 * Token rows for the request path (env.TOKENS_DIRECT): a row is reused for `ttlMs` without a
 * query. A revocation takes effect at the next request all the same:
 * - from another process (`ballast token revoke` opens its own connection), through SQLite's
 *   `PRAGMA data_version`, which changes exactly when another connection committed a write and
 *   costs no table read: any such change empties the cache;
 * - from this process, through revokeToken(), which empties it directly.
 * A raw UPDATE of api_tokens on the host's own connection is neither (no product path does it):
 * it is seen after at most ttlMs.
 */
export class TokenCache implements TokenLookup {
  private readonly rows = new Map<string, { row: TokenRecord | null; at: number }>();
  private readonly select: Database.Statement;
  private readonly version: Database.Statement;
  private readonly touchStmt: Database.Statement;
  private seen: number;

  constructor(
    db: SqliteDb,
    private readonly ttlMs: number,
  ) {
    this.select = db.prepare(TOKEN_ROW_SQL);
    this.version = db.prepare('PRAGMA data_version').pluck();
    this.touchStmt = db.prepare(TOKEN_TOUCH_SQL);
    this.seen = this.version.get() as number;
    caches.set(db, this);
  }

  token(id: string): TokenRecord | null {
    const version = this.version.get() as number;
    if (version !== this.seen) {
      this.rows.clear();
      this.seen = version;
    }
    const now = Date.now();
    const hit = this.rows.get(id);
    if (hit && now - hit.at < this.ttlMs) return hit.row;
    const row = (this.select.get(id) as TokenRecord | undefined) ?? null;
    if (this.ttlMs > 0) {
      if (this.rows.size >= TOKEN_CACHE_MAX_ROWS) this.rows.clear();
      this.rows.set(id, { row, at: now });
    }
    return row;
  }

  touch(id: string, at: number): void {
    this.touchStmt.run(at, id);
    const hit = this.rows.get(id);
    if (hit?.row) hit.row = { ...hit.row, last_used_at: at };
  }

  forget(): void {
    this.rows.clear();
  }
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

/** One token's row by id (null: none), for the API's checks of the calling token. */
export function tokenById(
  db: SqliteDb,
  id: string,
): { id: string; name: string; permissions: string[]; expiresAt: number | null; revokedAt: number | null } | null {
  const r = db.prepare('SELECT id, name, permissions, expires_at, revoked_at FROM api_tokens WHERE id = ?').get(id) as
    { id: string; name: string; permissions: string; expires_at: number | null; revoked_at: number | null } | undefined;
  if (!r) return null;
  const p = permissionsText(r.permissions);
  return { id: r.id, name: r.name, permissions: p, expiresAt: r.expires_at, revokedAt: r.revoked_at };
}

/** The live token with this id, or else this name (null: none). */
export function liveTokenByIdOrName(db: SqliteDb, idOrName: string): { id: string; name: string } | null {
  const r = db
    .prepare(
      'SELECT id, name FROM api_tokens WHERE (id = ? OR name = ?) AND revoked_at IS NULL ORDER BY id = ? DESC LIMIT 1',
    )
    .get(idOrName, idOrName, idOrName) as { id: string; name: string } | undefined;
  return r ?? null;
}
