/**
 * Shapes of everything the fs area parses out of command output. Parsers return these
 * `z.infer` types; the schemas themselves are used by tests (every expected.json must satisfy
 * them) and by routes that want to describe their responses.
 *
 * Naming: camelCase for our own fields; field names the spec fixes (`fileName`, `hash`,
 * `result`, `device_associated`, `name`) are kept exactly.
 */
import * as z from 'zod';

// ---------------------------------------------------------------------------------------------
// xxhsum
// ---------------------------------------------------------------------------------------------

/**
 * Hash family as xxhsum names it in BSD (`--tag`) lines. XXH3 is the 64-bit XXH3 variant (`-H3`);
 * XXH128 is XXH3's 128-bit variant (`-H2`).
 */
export const xxhAlgorithmSchema = z.enum(['XXH32', 'XXH64', 'XXH128', 'XXH3']);
export type XxhAlgorithm = z.infer<typeof xxhAlgorithmSchema>;

/** Lower- or upper-case hex; xxhsum prints lower case, checksum files may hold either. */
const hexSchema = z.string().regex(/^[0-9a-fA-F]+$/);

/** One line of `xxhsum` generate output. `hash` is the bare hex digest (no `XXH3_` prefix). */
export const xxhsumSumSchema = z.object({
  hash: hexSchema,
  fileName: z.string(),
  algorithm: xxhAlgorithmSchema,
  /** present (true) only when the output said so (`XXH64_LE (...)` with `--little-endian --tag`) */
  littleEndian: z.literal(true).optional(),
});
export type XxhsumSum = z.infer<typeof xxhsumSumSchema>;

/**
 * Result of one checked file. `FAILED open or read` is GNU md5sum's wording; xxhsum says
 * `<sums>:<line>: Could not open or read '<name>': <reason>.` and we map that to the same result
 * so callers see one vocabulary.
 */
export const xxhsumCheckResultSchema = z.enum(['OK', 'FAILED', 'FAILED open or read']);
export type XxhsumCheckResult = z.infer<typeof xxhsumCheckResultSchema>;

export const xxhsumCheckEntrySchema = z.object({
  fileName: z.string(),
  result: xxhsumCheckResultSchema,
  /** line of the checksum file, when the tool named it (only the open-or-read message does) */
  line: z.number().int().positive().optional(),
  /** strerror text of an open-or-read failure, e.g. `No such file or directory` */
  reason: z.string().optional(),
});
export type XxhsumCheckEntry = z.infer<typeof xxhsumCheckEntrySchema>;

export const xxhsumCheckSchema = z.object({
  results: z.array(xxhsumCheckEntrySchema),
  counts: z.object({
    /** OK lines seen (0 under `-q`/`--status`, which hide them) */
    ok: z.number().int().nonnegative(),
    /** from the `N computed checksum(s) did NOT match` summary, else counted from lines */
    failed: z.number().int().nonnegative(),
    /** from the `N listed file(s) could not be read` summary, else counted from lines */
    unreadable: z.number().int().nonnegative(),
    /** from the `N line(s) ... improperly formatted` summary */
    improperlyFormatted: z.number().int().nonnegative(),
  }),
  /** stderr said `<file>: no properly formatted xxHash checksum lines found` */
  noProperlyFormattedLines: z.boolean(),
  /** checksum-file line numbers named by `--warn` (`<file>:<n>: Error: Improperly formatted ...`) */
  improperLines: z.array(z.number().int().positive()),
  /** any other stderr line, trimmed (e.g. the checksum file itself could not be opened) */
  errors: z.array(z.string()),
});
export type XxhsumCheck = z.infer<typeof xxhsumCheckSchema>;

/** One properly formatted line of a checksum file, as xxhsum -c would read it. */
export const checksumFileEntrySchema = z.object({
  line: z.number().int().positive(),
  hash: hexSchema,
  fileName: z.string(),
  algorithm: xxhAlgorithmSchema,
  style: z.enum(['gnu', 'bsd']),
  /** the line started with `\` (xxhsum >= 0.8.2 / GNU escaping of `\\`, `\n`, `\r`) */
  escaped: z.boolean(),
  littleEndian: z.literal(true).optional(),
});
export type ChecksumFileEntry = z.infer<typeof checksumFileEntrySchema>;

export const checksumFileSchema = z.object({
  entries: z.array(checksumFileEntrySchema),
  /** lines xxhsum would count as improperly formatted (blank lines included) */
  improper: z.array(z.object({ line: z.number().int().positive(), reason: z.string() })),
  /** `#` lines: ignored by xxhsum >= 0.8.2, counted as improper by 0.8.1 */
  comments: z.array(z.number().int().positive()),
});
export type ChecksumFile = z.infer<typeof checksumFileSchema>;

// ---------------------------------------------------------------------------------------------
// POSIX ACLs (getfacl / setfacl)
// ---------------------------------------------------------------------------------------------

/** Always the three-character form getfacl prints (`rw-`), never octal. */
export const aclPermsSchema = z.string().regex(/^[r-][w-][x-]$/);

export const aclTagSchema = z.enum(['user', 'group', 'mask', 'other']);
export type AclTag = z.infer<typeof aclTagSchema>;

export const aclEntrySchema = z.object({
  /** `default` for `default:` / `d:` entries (inherited by new files in a directory) */
  scope: z.enum(['access', 'default']),
  tag: aclTagSchema,
  /** user/group name or numeric id; null for the owner, owning group, mask and other */
  qualifier: z.string().nullable(),
  perms: aclPermsSchema,
  /** getfacl's `#effective:` comment, present only when getfacl printed it */
  effective: aclPermsSchema.optional(),
});
export type AclEntry = z.infer<typeof aclEntrySchema>;

/** One `# file:` block of getfacl output. Header fields are null when `-c` omitted them. */
export const getfaclFileSchema = z.object({
  /** unescaped (`\012` → newline, `\\` → `\`); relative when getfacl stripped the leading `/` */
  file: z.string().nullable(),
  owner: z.string().nullable(),
  group: z.string().nullable(),
  flags: z.object({ setuid: z.boolean(), setgid: z.boolean(), sticky: z.boolean() }),
  entries: z.array(aclEntrySchema),
});
export type GetfaclFile = z.infer<typeof getfaclFileSchema>;

/** One line (record) of `setfacl --test` output. null = `*` (that ACL is not shown/unchanged). */
export const setfaclTestRecordSchema = z.object({
  path: z.string(),
  access: z.array(aclEntrySchema).nullable(),
  defaults: z.array(aclEntrySchema).nullable(),
});
export type SetfaclTestRecord = z.infer<typeof setfaclTestRecordSchema>;

/** What a setfacl failure on stderr means, so a route can answer 400 (bad entry) vs 404/500. */
export const setfaclErrorSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('invalid-argument'),
    option: z.string(),
    /** 1-based character position in the option's argument where setfacl gave up */
    character: z.number().int().positive(),
  }),
  z.object({ kind: z.literal('incomplete'), option: z.string() }),
  z.object({ kind: z.literal('file'), path: z.string(), message: z.string() }),
  z.object({ kind: z.literal('other'), message: z.string() }),
]);
export type SetfaclError = z.infer<typeof setfaclErrorSchema>;

// ---------------------------------------------------------------------------------------------
// available filesystems
// ---------------------------------------------------------------------------------------------

export const availableFsSchema = z.object({ name: z.string(), device_associated: z.boolean() });
export type AvailableFs = z.infer<typeof availableFsSchema>;

// ---------------------------------------------------------------------------------------------
// signatures, swap (lsblk and findmnt: handlers/tools)
// ---------------------------------------------------------------------------------------------

/** One signature from `wipefs -n -J` (read only; `-n` never writes). */
export const wipefsSignatureSchema = z.object({
  device: z.string(),
  offset: z.number().int().nonnegative(),
  type: z.string(),
  uuid: z.string().nullable(),
  label: z.string().nullable(),
  /** only with `-O ...,USAGE`: `filesystem`, `partition-table`, `raid`, `crypto`, `other` (swap says `other`) */
  usage: z.string().nullable(),
});
export type WipefsSignature = z.infer<typeof wipefsSignatureSchema>;

/** One row of /proc/swaps. Sizes are KiB as the kernel prints them. */
export const swapEntrySchema = z.object({
  /** unescaped (`\040` → space) */
  filename: z.string(),
  type: z.string(),
  sizeKiB: z.number().int().nonnegative(),
  usedKiB: z.number().int().nonnegative(),
  priority: z.number().int(),
});
export type SwapEntry = z.infer<typeof swapEntrySchema>;

/** Answer of the pure refusal rules (device-free.ts). `code` is stable; `reason` is for people. */
export const checkResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), code: z.string(), reason: z.string() }),
]);
export type CheckResult = z.infer<typeof checkResultSchema>;
