/**
 * Answers of the notification routes: an agent as the spec shows it (id, hostid, type, enabled,
 * json, unix_time, createdAt, updatedAt), its secrets only ever the mask (so a leak fails the
 * response check), and the events listing (an extension: GET /notification/events).
 */
import * as z from 'zod';
import { smsConfig, smtpConfig, webhookConfig } from './agent-config';
import { SECRET_MASK } from './mask';
import { maskUrl } from './url-secrets';

const masked = z.literal(SECRET_MASK);
/** A webhook URL as answers show it: every credential in it is the mask. */
const maskedUrl = z.string().refine((s) => maskUrl(s) === s, { message: 'a credential in the URL is not masked' });
const common = {
  id: z.number().int(),
  hostid: z.string(),
  enabled: z.boolean(),
  /** Milliseconds since the epoch when the agent was created, as a string (spec). */
  unix_time: z.string().regex(/^\d+$/),
  createdAt: z.string(),
  updatedAt: z.string(),
};
export const agent = z.discriminatedUnion('type', [
  z.object({ ...common, type: z.literal('sms'), json: smsConfig.extend({ authToken: masked }) }),
  z.object({ ...common, type: z.literal('smtp'), json: smtpConfig.extend({ password: masked }) }),
  z.object({
    ...common,
    type: z.literal('webhook'),
    json: webhookConfig.extend({ url: maskedUrl, secret: masked.optional() }),
  }),
]);
export type Agent = z.infer<typeof agent>;

/* ---- the events listing ---- */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export const delivery = z.object({
  agentId: z.number().int(),
  state: z.enum(DELIVERY_STATES),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastAttemptAt: z.string().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  heldBy: z
    .string()
    .nullable()
    .describe(
      "A pending delivery that waits behind an older one of the same agent: that agent's oldest pending delivery's event id (each agent receives its notifications in event order, so its queue moves on once that one is delivered, failed or cancelled; that delivery's nextAttemptAt says when it is tried next). null for the oldest one itself and for settled deliveries.",
    ),
});
export const event = z.object({
  id: z.string(),
  seq: z.number().int(),
  kind: z.string(),
  time: z.string(),
  requestId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  deliveries: z.array(delivery),
});
