/**
 * The host operation behind POST /fs/xxhash_verify's checksum file: read one regular text file
 * anywhere below `settings.fs.readRoots` (the same read-only policy as explore). The SYSTEM
 * file operations are confined to the configured config paths, and a checksum file lives next
 * to the data it describes, so it needs its own, read-only door.
 *
 * The route validates what it read (absolute names only) and hands exactly that text to
 * `xxhsum -c` on stdin, so the file cannot change between the check and the use.
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';

export const READ_TEXT_OP = 'fs/read-text';

/** A checksum file of 64 MiB lists ~500 000 files; anything larger is refused (413). */
export const READ_TEXT_MAX_BYTES = 64 * 1024 * 1024;

export const readTextPayload = z.strictObject({
  path: absolutePath,
  maxBytes: z.number().int().min(1).max(READ_TEXT_MAX_BYTES).optional(),
});
export type ReadTextPayload = z.infer<typeof readTextPayload>;

export const readTextResult = z.object({ content: z.string() });
export type ReadTextResult = z.infer<typeof readTextResult>;
