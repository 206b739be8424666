/** Answer shapes of the keys routes. */
import * as z from 'zod';

const fingerprint = z
  .string()
  .describe('colon-separated hex MD5 of the key blob, as `ssh-keygen -l -E md5` prints it without `MD5:`');

/** An authorized key as add answers it (the spec's entry without `index`). */
export const keyEntry = z.object({
  algo: z
    .string()
    .describe(
      'key type, e.g. ssh-ed25519, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, ssh-rsa-cert-v01@openssh.com',
    ),
  blob: z.string().describe('the base64 key field'),
  comment: z.string().describe('text after the key ("" when none)'),
  fingerprint,
  line: z.string().describe('the full line, options included'),
});

/** A listed line: a key, or (with `error`) a line sshd cannot use, listed rather than hidden. */
export const authorizedEntry = keyEntry.extend({
  index: z.number().int().min(0).describe('position among the listed lines, from 0 (blank and # lines are not listed)'),
  error: z
    .string()
    .optional()
    .describe('present only for a line that is not a valid key line: why (its other fields are "")'),
});

/** auth/add answers the entry it added. */
export const authAddAnswer = keyEntry;
export const authListAnswer = z.array(authorizedEntry);
export const pubAnswer = z.object({
  public_key: z.string().describe('the key line of ~/.ssh/id_ed25519.pub (type, base64, comment)'),
});
export const pubGenerateAnswer = z.object({}).strict();
export const authRemoveAnswer = z.object({ fingerprint });
