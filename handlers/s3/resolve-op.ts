/** The host op that resolves a share's directory (runtime/areas/s3.ts runs it). */
import * as z from 'zod';

export const RESOLVE_PATH_OP = 's3/resolve-path';

export const resolvePathPayload = z.strictObject({ path: z.string().min(1).max(4096) });

/**
 * `ok`: the real path (symlinks resolved) is a directory at or under a share root. Otherwise why
 * not: `missing` (does not exist), `not-directory`, `outside` (not under settings.s3.shareRoots).
 */
export type ResolvePathResult =
  { ok: true; path: string } | { ok: false; reason: 'missing' | 'not-directory' | 'outside'; path?: string };
