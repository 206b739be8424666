import * as z from 'zod';
import { PERMISSION_PATTERN } from '../core/auth';
import { API_TOKEN_MAX_DAYS } from './contract';
import { tokenName, tokenRef } from './names';

export const tokenCreateBody = z.strictObject({
  name: tokenName,
  /** `<area>:read`, `<area>:manage` or `*`; each one the calling token holds itself */
  permissions: z.array(z.string().regex(PERMISSION_PATTERN, 'must be <area>:read, <area>:manage or *')).min(1).max(64),
  /** days until it expires: 1 to 365, default 90 (and never after the calling token's own expiry) */
  expiresInDays: z.number().int().min(1).max(API_TOKEN_MAX_DAYS).optional(),
});

export const tokenRevokeParams = z.strictObject({ id: tokenRef });
