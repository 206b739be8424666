import { STATUS_CODES } from 'node:http';
import type { WebhookConfig } from '../../../../handlers/notification/contract';
import { isLocalHost } from '../../../../handlers/notification/contract';
import { LocalTargetError, post, retryAfterMs } from '../http-post';
import type { Notification } from '../payload';
import { SendError } from '../send-error';
import { signWebhook } from '../signature';
import type { SendContext } from './context';

/**
 * One HTTP POST of the notification's JSON, the Standard Webhooks way: `webhook-id` (the event
 * id, stable across retries: the receiver's idempotency key), `webhook-timestamp` (this attempt,
 * Unix seconds) and, when the agent has a secret, `webhook-signature: v1,<base64 HMAC>`. Only 2xx
 * is success; redirects are not followed; 410 Gone stops the retries.
 */
export async function sendWebhook(
  cfg: WebhookConfig,
  n: Notification,
  ctx: SendContext,
  now = Date.now(),
): Promise<void> {
  const url = new URL(cfg.url);
  const body = JSON.stringify(n);
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `${ctx.productName}-notifier`,
    'webhook-id': n.id,
    'webhook-timestamp': String(timestamp),
  };
  if (cfg.secret) headers['webhook-signature'] = signWebhook(cfg.secret, n.id, timestamp, body);
  // The origin only: a webhook URL's path or query often embeds a token of the receiver's.
  const where = url.origin;
  const local = !ctx.settings.allowLocalTargets;
  if (local && isLocalHost(url.hostname)) {
    throw new SendError(
      `webhook ${where} is a local address; webhooks go to other machines (settings.notification.allowLocalTargets)`,
      { permanent: true },
    );
  }
  let r;
  try {
    r = await post(url, { headers, body, timeoutMs: ctx.settings.timeoutMs, ca: ctx.ca, refuseLocal: local });
  } catch (e) {
    if (e instanceof LocalTargetError)
      throw new SendError(
        `webhook ${where} resolves to a local address (${e.address}); webhooks go to other machines (settings.notification.allowLocalTargets)`,
        { permanent: true },
      );
    throw new SendError(`webhook ${where} is unreachable: ${(e as Error).message}`);
  }
  if (r.status >= 200 && r.status < 300) return;
  // The status line with the standard reason phrase, not the receiver's own phrase or body:
  // either may echo what it was sent or hold the receiver's secrets.
  throw new SendError(`webhook ${where} answered ${statusLine(r.status)}`, {
    permanent: r.status === 410,
    retryAfterMs: retryAfterMs(r.headers),
  });
}

/** `HTTP 503 Service Unavailable`; a code with no registered phrase stays bare. */
export function statusLine(status: number): string {
  const phrase = STATUS_CODES[status];
  return phrase ? `HTTP ${status} ${phrase}` : `HTTP ${status}`;
}
