import * as z from 'zod';
import { tokenCreateResult, tokenInfo } from './contract';

/** A token as listed: never its secret nor its hash. */
export const tokenEntry = tokenInfo.extend({
  /** live, expired or revoked */
  state: z.enum(['live', 'expired', 'revoked']),
});

export const tokenListAnswer = z.array(tokenEntry);

/** The new token, its secret shown this once. */
export const tokenCreateAnswer = tokenCreateResult;

export const tokenRevokeAnswer = z.object({ id: z.string(), name: z.string(), revokedAt: z.string() });
