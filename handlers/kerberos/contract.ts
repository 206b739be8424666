import * as z from 'zod';

/** `settings.kerberos` (checked by the host at start, read by the routes through VARS). */
export const kerberosSettings = z.strictObject({
  /** kinit's hard limit: a KDC or DNS that never answers (tests use a short one). */
  kinitTimeoutMs: z.number().int().min(100).max(300_000).optional(),
  /**
   * Keytabs kinit and klist may read besides the configured `paths.keytab`: files or directories
   * (a keytab's real path must be one of them or below one).
   */
  keytabRoots: z.array(z.string().regex(/^\/[^\0]*$/, 'must be an absolute path')).default(['/etc/ballast/keytabs']),
});
export type KerberosSettings = z.output<typeof kerberosSettings>;
