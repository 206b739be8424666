/**
 * What the token routes and the host's tokens area (runtime/areas/tokens.ts) share. Tokens are
 * made and revoked by the host (runtime/tokens.ts): the secret is generated there, only its hash
 * stored, and the op checks the calling token's own row, so no token mints or revokes more than
 * it holds.
 */
import * as z from 'zod';
import { tokenName } from './names';

export const TOKENS_LIST_OP = 'tokens/list';
export const TOKENS_CREATE_OP = 'tokens/create';
export const TOKENS_REVOKE_OP = 'tokens/revoke';

/** A token made over the API lives at most this long (the CLI, for recovery, allows 10 years). */
export const API_TOKEN_MAX_DAYS = 365;
/** …and this long when the request does not say. */
export const API_TOKEN_DEFAULT_DAYS = 90;

export const tokenCreatePayload = z.strictObject({
  name: tokenName,
  permissions: z.array(z.string()).min(1).max(64),
  expiresInDays: z.number().int().min(1).max(API_TOKEN_MAX_DAYS).optional(),
  /** the id of the token making the request (the host reads its permissions itself) */
  by: z.string(),
});

export const tokenRevokePayload = z.strictObject({ idOrName: z.string(), by: z.string() });

export const tokenInfo = z.object({
  id: z.string(),
  name: z.string(),
  permissions: z.array(z.string()),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
});
export type TokenInfo = z.output<typeof tokenInfo>;

export const tokenCreateResult = z.object({
  id: z.string(),
  name: z.string(),
  /** `blt_<id>_<secret>`: in this answer only, never stored, listed or logged */
  token: z.string(),
  permissions: z.array(z.string()),
  expiresAt: z.string(),
});
export type TokenCreateResult = z.output<typeof tokenCreateResult>;

/** `settings.tokens`: none yet (the config file may give `{}`). */
export const tokensSettings = z.strictObject({});
