import { ApiError } from './errors';
import type { D1Database, TokenLookup, TokenRecord } from './bindings';

/**
 * API tokens look like `blt_<id>_<secret>`: the id finds the row, the secret is compared by its
 * SHA-256 in constant time. Only the hash is stored, so a stolen DB does not leak usable tokens.
 */
export const TOKEN_PATTERN = /^blt_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** The token id a `token` header names (not a secret), or undefined when it is no token. */
export const tokenIdOf = (header: string | null | undefined): string | undefined =>
  TOKEN_PATTERN.exec(header?.trim() ?? '')?.[1];

/** A row of api_tokens (the same record the in-process token lookup answers). */
export type TokenRow = TokenRecord;

/** The token row by id, and the record of its use: the same statements for the DB binding and the host's cache. */
export const TOKEN_ROW_SQL =
  'SELECT id, name, hash, permissions, expires_at, revoked_at, last_used_at FROM api_tokens WHERE id = ?';
export const TOKEN_TOUCH_SQL = 'UPDATE api_tokens SET last_used_at = ? WHERE id = ?';

export interface Principal {
  tokenId: string;
  name: string;
  permissions: string[];
}

/** The permission of a route served without a token (health, version): nothing else may use it. */
export const PUBLIC_PERMISSION = 'public';

/** Who calls a public route: no token, no permission. */
export const ANONYMOUS: Principal = Object.freeze({ tokenId: '', name: '', permissions: [] as string[] });

const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Hashes of recently presented secrets, so a busy client does not pay a digest per request.
 * Keyed by the secret itself, which is already in this process's memory with every request.
 */
const recentHashes = new Map<string, string>();
const RECENT_HASHES_MAX = 256;

async function secretHash(secret: string): Promise<string> {
  const hit = recentHashes.get(secret);
  if (hit) return hit;
  const h = await sha256Hex(secret);
  if (recentHashes.size >= RECENT_HASHES_MAX) recentHashes.delete(recentHashes.keys().next().value as string);
  recentHashes.set(secret, h);
  return h;
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  let out = '';
  for (const b of new Uint8Array(digest)) out += b.toString(16).padStart(2, '0');
  return out;
}

export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** `x:manage` implies `x:read`; `*` grants everything. */
export function hasPermission(granted: readonly string[], needed: string): boolean {
  if (granted.includes('*') || granted.includes(needed)) return true;
  const [area, level] = needed.split(':');
  return level === 'read' && granted.includes(`${area}:manage`);
}

export const PERMISSION_PATTERN = /^(\*|[a-z][a-z0-9]*:(read|manage))$/;

/**
 * The first of `wanted` a token holding `granted` may not hand out (a token minted over the API, or one
 * revoked over it): each wanted permission must be one the holder has (`*` only from `*`,
 * `x:read` also from `x:manage`), so no token mints more than it holds.
 */
export function ungrantable(granted: readonly string[], wanted: readonly string[]): string | undefined {
  return wanted.find((p) => (p === '*' ? !granted.includes('*') : !hasPermission(granted, p)));
}

const unauthorized = (message: string) => new ApiError('unauthorized', message);

/**
 * The token's principal, or 401. `lookup` (env.TOKENS_DIRECT, the Node host only) answers the
 * row from a short-lived cache that revocation empties at once; without it, one query per request.
 */
export async function authenticate(
  db: D1Database,
  header: string | null,
  now = Date.now(),
  lookup?: TokenLookup,
): Promise<Principal> {
  if (!header) throw unauthorized('missing token header');
  const m = TOKEN_PATTERN.exec(header.trim());
  if (!m) throw unauthorized('invalid token');
  const [, id, secret] = m;
  const row = lookup ? lookup.token(id) : await db.prepare(TOKEN_ROW_SQL).bind(id).first<TokenRow>();
  // Hash even when the row is missing so timing does not tell which ids exist.
  const hash = await secretHash(secret);
  if (!row || !constantTimeEqual(hash, row.hash)) throw unauthorized('invalid token');
  if (row.revoked_at !== null) throw unauthorized('token revoked');
  if (row.expires_at !== null && row.expires_at <= now) throw unauthorized('token expired');
  if (row.last_used_at === null || now - row.last_used_at > LAST_USED_GRANULARITY_MS) {
    if (lookup) await lookup.touch(id, now);
    else await db.prepare(TOKEN_TOUCH_SQL).bind(now, id).run();
  }
  let permissions: string[];
  try {
    permissions = JSON.parse(row.permissions) as string[];
  } catch {
    permissions = [];
  }
  return { tokenId: row.id, name: row.name, permissions };
}

/**
 * A route any valid token may call (the jobs routes): what each token then sees is the route's
 * own filter (its own jobs, with their area's read permission).
 */
export const ANY_TOKEN = 'authenticated';

export function authorize(principal: Principal, needed: string): void {
  if (needed !== ANY_TOKEN && !hasPermission(principal.permissions, needed)) {
    throw new ApiError('forbidden', `token lacks permission ${needed}`);
  }
}
