/** Answer shapes of the certificate routes. */
import * as z from 'zod';
import { PIECES } from './contract';

export const trustListAnswer = z
  .array(z.string().describe('file name ending in .crt'))
  .describe('names of the trusted certificates');
export const trustDetailsAnswer = z.object({ certificate: z.string().describe('PEM text of the file') });
export const trustUpdateAnswer = z
  .string()
  .describe(
    'a line naming the file added or removed and its certificate (`Removed partner-ca.crt (CN=…, SHA-256 …).`), then the output of update-ca-certificates',
  );
export const retrieveAnswer = z.array(
  z.object({ piece: z.enum(PIECES), output: z.string().describe('PEM text; empty when the piece is not present') }),
);
export const ingestAnswer = z.object({
  confirmationTimeout: z
    .number()
    .describe('seconds until the previous pieces come back unless POST /certificate/commit'),
  resolutions: z.array(
    z.object({
      piece: z.enum(PIECES),
      output: z.string().describe('file path where the piece was stored (or removed)'),
    }),
  ),
});
export const commitAnswer = z.strictObject({});
export const regenerateAnswer = z.null().describe('no body: 204 with the usual headers');
