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

/**
 * Host op: make the configured include directory (paths.krb5ConfD, mode 0755) if it is missing,
 * so the global file's `includedir` never names a missing directory (every Kerberos program
 * would fail with "Included profile directory could not be read"). No payload; answers
 * `{ created }`.
 */
export const ENSURE_CONF_DIR_OP = 'kerberos/ensure-conf-dir';
export const ensureConfDirResult = z.object({ created: z.boolean() });
