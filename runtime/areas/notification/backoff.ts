import type { NotificationSettings } from '../../../handlers/notification/contract';

/** Delay before attempt `attempt + 1`, given `attempt` attempts failed (attempt ≥ 1). */
export function backoffMs(
  s: NotificationSettings,
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(s.backoffMaxMs, s.backoffBaseMs * 2 ** Math.min(attempt - 1, 40));
  const jittered = Math.round(exp * (0.8 + 0.4 * random()));
  return Math.min(s.backoffMaxMs, Math.max(jittered, retryAfterMs ?? 0));
}
