/** Request shapes of the keys routes. */
import * as z from 'zod';
import { userName } from './contract';

const user = userName.describe(
  'whose keys (default: the API user, settings.keys.apiUser); the API user or a member of settings.keys.group',
);

/** GET routes: the spec's body parameter `user`, taken from the query (the host maps a GET body onto it). */
export const userQuery = z.strictObject({ user: user.optional() });

/** Longest key line accepted (sshd's authorized_keys lines are at most 8 KB). */
const MAX_KEY_LINE = 8192;

export const authAddBody = z.strictObject({
  key: z
    .string()
    .min(1)
    .max(MAX_KEY_LINE)
    .refine((s) => !/[\n\r\0]/.test(s), 'must be one line: no line break or NUL')
    .refine((s) => !/[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(s), 'must not contain control characters')
    .describe('a full authorized_keys line: `[options] keytype base64 [comment]`'),
  user: user.optional(),
});

export const authRemoveBody = z.strictObject({
  fingerprint: z.string().min(1).max(64).describe('MD5 fingerprint, `aa:bb:…` or `MD5:aa:bb:…` (case-insensitive)'),
  user: user.optional(),
});
