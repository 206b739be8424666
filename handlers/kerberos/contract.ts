import * as z from 'zod';

/** `settings.kerberos` (checked by the host at start, read by the routes through VARS). */
export const kerberosSettings = z.strictObject({
  /** kinit's hard limit: a KDC or DNS that never answers (tests use a short one). */
  kinitTimeoutMs: z.number().int().min(100).max(300_000).optional(),
});
export type KerberosSettings = z.output<typeof kerberosSettings>;
