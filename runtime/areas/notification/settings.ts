import { issuesOf, issuesText } from '../../../handlers/core/errors';
import type * as z from 'zod';
import { deliverySettingsSchema } from '../../../handlers/notification/contract';

export { deliverySettingsSchema };
export type DeliverySettings = z.infer<typeof deliverySettingsSchema>;

/** Reads `settings.notification`; a wrong key or value stops the host at start with its path. */
export function deliverySettings(settings: Record<string, unknown>): DeliverySettings {
  const r = deliverySettingsSchema.safeParse(settings.notification ?? {});
  if (!r.success) {
    throw new Error(`config: ${issuesText(issuesOf('settings.notification', r.error))}`);
  }
  return r.data;
}

/** Delay before attempt `attempt + 1`, given `attempt` attempts failed (attempt ≥ 1). */
export function backoffMs(
  s: DeliverySettings,
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(s.backoffMaxMs, s.backoffBaseMs * 2 ** Math.min(attempt - 1, 40));
  const jittered = Math.round(exp * (0.8 + 0.4 * random()));
  return Math.min(s.backoffMaxMs, Math.max(jittered, retryAfterMs ?? 0));
}
