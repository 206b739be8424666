/** What a client sends to the notification routes. */
import * as z from 'zod';
import { agentType, bool, smsConfig, smtpConfig, webhookConfig } from './agent-config';

export const agentIdParams = z.object({
  id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'must be a positive integer')
    .transform(Number),
});

const typeError = { error: 'type must be sms, smtp or webhook' };
export const agentCreateBody = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('sms'), enabled: bool(), json: smsConfig }),
    z.strictObject({ type: z.literal('smtp'), enabled: bool(), json: smtpConfig }),
    z.strictObject({ type: z.literal('webhook'), enabled: bool(), json: webhookConfig }),
  ],
  typeError,
);

/**
 * Every field is optional (the spec): `{}` changes nothing. `json` is checked in the handler,
 * against the type the agent will have after the update; with the type unchanged it is merged
 * into the stored configuration (shallow: a key given replaces that key), with a new type it
 * replaces it. `id` may be sent back (an agent object as details answered it) and must equal the
 * URL's. Unknown keys are refused.
 */
export const agentUpdateBody = z.strictObject({
  id: z
    .union(
      [
        z.number().int(),
        z
          .string()
          .regex(/^[1-9]\d{0,14}$/)
          .transform(Number),
      ],
      { error: 'must be the agent id (a positive integer)' },
    )
    .optional()
    .describe("optional: the agent's id, as details shows it; must equal the id in the URL"),
  type: agentType.optional().describe('new type; a type change needs a full json'),
  enabled: bool().optional(),
  json: z
    .record(z.string(), z.unknown(), { error: 'must be an object' })
    .optional()
    .describe(
      'configuration: with the type unchanged, the fields given are merged into the stored configuration (omitted fields and secrets are kept); with a new type, the whole configuration',
    ),
});

export const eventListQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'must be 1-500')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 500, 'must be 1-500')
    .optional(),
  kind: z
    .string()
    .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, 'must be an event kind such as s3.share.created')
    .optional(),
});
