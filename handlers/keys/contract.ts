/**
 * What the keys routes and the host's keys area module (runtime/areas/keys.ts) share: the
 * settings, the host operations' names, payloads and results, and the pure parsers the host
 * uses (user database lines).
 *
 * Every file a keys route touches lies in a user's home, which the SYSTEM file operations
 * (confined to the configured paths) cannot reach. The host ops below resolve the user from the
 * user database, check that the user may be named and that the home lies under
 * `settings.keys.homeRoots`, refuse a `.ssh` or key file that is a symlink or a special file,
 * and then read or write with the user's ownership.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import type { ExecResult } from '../core/system';

export { parseGroup, parsePasswd, type GroupEntry, type PasswdEntry } from './parse/getent';

/** A login name: no `/`, no leading `-` or `.`, no spaces (what useradd's NAME_REGEX allows, and capitals). */
export const userName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,31}$/, 'must be a user name: 1-32 of A-Z a-z 0-9 _ . - not starting with . or -');

export const keysSettings = z.strictObject({
  /** The user the API's own key belongs to (the default `user`). */
  apiUser: userName.default('root'),
  /** Members of this group (listed, or with it as primary group) may also be named; null: only apiUser. */
  group: userName.nullable().default('ballast-keys'),
  /** Homes must resolve (realpath) to one of these or below. */
  homeRoots: z.array(absolutePath).min(1).default(['/home', '/root']),
  /**
   * The user database's home paths are taken relative to this directory (default `/`: as they
   * are). The demo points it at its own root, so `/home/alice` is `var/demo/root/home/alice`.
   */
  userRoot: absolutePath.default('/'),
  /** Give created and rewritten files the user's ownership (off only where the host is not root: the demo). */
  setOwner: z.boolean().default(true),
  /** The host name in a generated key's comment (`user@host`); default: this machine's host name. */
  commentHost: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/)
    .optional(),
  /** ssh-keygen's time limit. */
  keygenTimeoutMs: z.number().int().min(1000).max(300_000).default(30_000),
  /** Largest authorized_keys file read or written. */
  maxFileBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
});
export type KeysSettings = z.output<typeof keysSettings>;

/** The key pair generate writes and pub reads, in ~/.ssh. */
export const KEY_FILE = 'id_ed25519';
export const AUTHORIZED_KEYS = 'authorized_keys';

/** Read ~/.ssh/authorized_keys or ~/.ssh/id_ed25519.pub. */
export const READ_OP = 'keys/read';
export const readPayload = z.strictObject({
  user: userName.optional(),
  file: z.enum(['authorized_keys', 'public_key']),
});
export interface ReadResult {
  user: string;
  /** the file as the user database names it (`/home/alice/.ssh/authorized_keys`) */
  path: string;
  /** null when the file (or ~/.ssh) does not exist */
  content: string | null;
  /** compare-and-swap token for WRITE_OP: SHA-256 of the bytes, or null when absent */
  version: string | null;
}

/**
 * Replace ~/.ssh/authorized_keys atomically if it still is `expectVersion` (else 409 conflict):
 * creates ~/.ssh 0700 owned by the user when needed; keeps the file's owner and mode (new: 0600,
 * the user's); temp file in ~/.ssh, fsync, rename.
 */
export const WRITE_OP = 'keys/write-authorized';
export const writePayload = z.strictObject({
  user: userName.optional(),
  content: z.string(),
  expectVersion: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
});
export interface WriteResult {
  user: string;
  path: string;
  version: string;
}

/**
 * A new ed25519 pair in ~/.ssh/id_ed25519{,.pub}: the old pair is moved aside, ssh-keygen runs as
 * the user, and the old pair comes back if it fails. The route maps a failed command to 502.
 */
export const GENERATE_OP = 'keys/generate';
export const generatePayload = z.strictObject({ user: userName.optional() });
export interface GenerateResult {
  user: string;
  argv: string[];
  result: ExecResult;
  /** the command was replayed (demo): nothing was written, the old pair is in place */
  replayed: boolean;
}
