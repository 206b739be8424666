/**
 * What the S3 routes and the host's s3 area module (runtime/areas/s3.ts) share: the settings, the
 * host ops' names, payloads and results, and what the host's settling reads of the journal.
 *
 * `settings.s3` (checked by the host at start, read by the routes with areaSettings). The S3
 * server is configuration: by default MinIO (`/usr/local/bin/minio server <path> --address
 * :<port>`, root credentials in MINIO_ROOT_USER / MINIO_ROOT_PASSWORD); any server that takes its
 * credentials from the environment fits.
 */
import * as z from 'zod';
import type { IntentOp, Step } from './journal';
import { shareName } from './names';

export { UNIT_DIR_KEY, ENV_DIR_KEY } from './names';
export { pendingIntent, settleIntent, type Intent, type Step } from './journal';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const envName = z.string().regex(ENV_NAME, 'an environment variable name: A-Z a-z 0-9 _, not starting with a digit');

/** No control characters anywhere in what is rendered into the unit. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** One word of the server command; `{path}` and `{port}` stand for the share's path and port. */
const commandWord = z
  .string()
  .min(1)
  .max(1024)
  .refine((w) => !CONTROL.test(w), 'must not contain control characters');

export const DEFAULT_SERVER_COMMAND = ['/usr/local/bin/minio', 'server', '{path}', '--address', ':{port}'];

export const s3Settings = z.strictObject({
  /**
   * The directory share paths are seen from: `/` on a real box. The demo sets its own root
   * (var/demo/root), so `/srv/media` there means var/demo/root/srv/media and stays `/srv/media` in
   * answers and environment files.
   */
  pathRoot: z
    .string()
    .regex(/^\/[^\0\n\r]*$/, 'an absolute path')
    .default('/'),
  /** Directories shares may be made of: the real path (symlinks resolved) must be one of them or under one. */
  shareRoots: z
    .array(z.string().regex(/^\/[^\0\n\r]*$/, 'an absolute path'))
    .min(1)
    .default(['/srv', '/mnt', '/media', '/data']),
  /** argv of the S3 server, rendered into ExecStart=; the first word is an absolute executable. */
  serverCommand: z
    .array(commandWord)
    .min(1)
    .refine(
      (a) => /^\/[A-Za-z0-9_./@+-]+$/.test(a[0]),
      'the first word must be the absolute path of the server executable (letters, digits, _ . / @ + -)',
    )
    .refine((a) => !a.includes(';'), 'a word ";" cannot be written into ExecStart=')
    .default(DEFAULT_SERVER_COMMAND),
  /** Names of the variables the environment file sets. */
  env: z
    .strictObject({
      rootUser: envName.default('MINIO_ROOT_USER'),
      rootPassword: envName.default('MINIO_ROOT_PASSWORD'),
      path: envName.default('MINIO_VOLUMES'),
      port: envName.default('BALLAST_S3_PORT'),
    })
    .default({
      rootUser: 'MINIO_ROOT_USER',
      rootPassword: 'MINIO_ROOT_PASSWORD',
      path: 'MINIO_VOLUMES',
      port: 'BALLAST_S3_PORT',
    })
    .refine((e) => new Set(Object.values(e)).size === 4, 'the four variable names must differ'),
  /** The account the server runs as (User=); it needs access to the shared paths, whose permissions are never changed. */
  user: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,31}$/, 'a user name')
    .default('root'),
  /** Group= (absent: the user's primary group). */
  group: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,31}$/, 'a group name')
    .optional(),
});
export type S3Settings = z.output<typeof s3Settings>;

/** The host op that resolves a share's directory (runtime/areas/s3/ops.ts runs it). */
export const RESOLVE_PATH_OP = 's3/resolve-path';

export const resolvePathPayload = z.strictObject({ path: z.string().min(1).max(4096) });

/**
 * `ok`: the real path (symlinks resolved) is a directory at or under a share root. Otherwise why
 * not: `missing` (does not exist), `not-directory`, `outside` (not under settings.s3.shareRoots).
 */
export type ResolvePathResult =
  { ok: true; path: string } | { ok: false; reason: 'missing' | 'not-directory' | 'outside'; path?: string };

/**
 * The host op that settles a share's unfinished change before a new one (runtime/areas/s3/settle.ts
 * runs it; the route side is handlers/s3/settle-op.ts).
 */
export const SETTLE_OP = 's3/settle';

export const settlePayload = z.strictObject({ shareName });

/** `pending: false`: nothing was unfinished. Otherwise what settling did, and whether it finished. */
export type SettleResult =
  | { pending: false }
  | { pending: true; op: IntentOp; outcome: 'rolled back' | 'completed'; complete: boolean; steps: Step[] };
