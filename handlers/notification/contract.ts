/**
 * What the notification routes and the host's notification area module share: the settings
 * schema (`settings.notification`), the agent configuration shapes the host parses stored agents
 * with, the test op, and the URL-secret helpers.
 */
import * as z from 'zod';
export {
  SECRET_FIELDS,
  agentConfig,
  type AgentType,
  type SmsConfig,
  type SmtpConfig,
  type WebhookConfig,
} from './agent-config';
export { isLocalAddress, isLocalHost } from './local-target';
export { openUrl, sealUrlSync, urlSecretValues } from './url-secrets';

/**
 * Delivery tuning, from the host config's `settings.notification` (all optional). The defaults
 * retry a failing destination for about a day: attempts at 0 s, then ≈10 s, 20 s, 40 s … doubling
 * up to 6 h between attempts, 15 attempts in all (≈ 23.4 h), each delay ±20 % jitter.
 */
export const notificationSettings = z.strictObject({
  /** Twilio REST API origin; tests point it at a local stand-in. */
  twilioBaseUrl: z.url({ protocol: /^https?$/ }).default('https://api.twilio.com'),
  /** Attempts per (event, agent), the first one included; then the delivery is `failed`. */
  maxAttempts: z.number().int().min(1).max(100).default(15),
  /** Delay before the 2nd attempt; doubles for each further one. */
  backoffBaseMs: z.number().int().min(1).default(10_000),
  /** Upper bound of one delay (also caps a destination's Retry-After). */
  backoffMaxMs: z
    .number()
    .int()
    .min(1)
    .default(6 * 3600_000),
  /** Longest sleep of the worker between looks at the outbox (new events wake it at once). */
  pollIntervalMs: z.number().int().min(10).default(5_000),
  /** Time limit of one send (connect, TLS, the whole SMTP dialogue or HTTP exchange). */
  timeoutMs: z.number().int().min(100).max(120_000).default(15_000),
  /** Sends in flight at once. */
  concurrency: z.number().int().min(1).max(32).default(4),
  /**
   * Let webhooks target loopback, link-local or unspecified addresses (this machine, cloud
   * metadata services); off by default (local-target.ts).
   */
  allowLocalTargets: z.boolean().default(false),
  /**
   * Deliver into this file instead of the network: every notification (and test message) an agent
   * would send is appended as one JSON line `{at, agentId, type, notification}` and counts as
   * delivered. For the embedded demo and offline trials, which have no destination to reach; unset
   * (the default) on a real box. The agent's configuration (and so its secrets) is never written.
   */
  sinkFile: z
    .string()
    .regex(/^\/[^\0]*$/, 'must be an absolute path')
    .optional(),
  /** Keep this many most recent events; older ones go once none of their deliveries is pending. */
  retainEvents: z.number().int().min(10).default(10_000),
});
export type NotificationSettings = z.output<typeof notificationSettings>;

/**
 * The host operation behind GET /notification/agent/{id}/test. The route asks the host
 * (runtime/areas/notification/ops.ts) because sending needs sockets, which route code has not.
 * A refused send is an answer, not a binding error, so the route can say why with a 502.
 */
export const TEST_OP = 'notification/test';
export const testOpPayload = z.strictObject({ id: z.number().int() });
export type TestOpPayload = z.output<typeof testOpPayload>;
export const testOpResult = z.union([
  z.strictObject({ sent: z.literal(true) }),
  z.strictObject({ sent: z.literal(false), error: z.string() }),
]);
export type TestOpResult = z.output<typeof testOpResult>;
