import type { SmsConfig } from '../../../../handlers/notification/contract';
import { excerpt, post, retryAfterMs } from '../http-post';
import { smsTextOf, type Notification } from '../payload';
import { SendError } from '../send-error';
import type { SendContext } from './context';

/**
 * One SMS through Twilio's REST API (2010-04-01): a form POST to
 * `/Accounts/{AccountSid}/Messages.json` with HTTP Basic `AccountSid:AuthToken`. Success is 2xx
 * (Twilio answers 201 with the queued message); errors carry `{code, message, more_info, status}`.
 */
export async function sendSms(cfg: SmsConfig, n: Notification, ctx: SendContext): Promise<void> {
  const url = new URL(
    `/2010-04-01/Accounts/${encodeURIComponent(cfg.accountSid)}/Messages.json`,
    ctx.settings.twilioBaseUrl,
  );
  const body = new URLSearchParams({
    To: cfg.toPhoneNumber,
    From: cfg.fromPhoneNumber,
    Body: smsTextOf(n, ctx.productName),
  }).toString();
  let r;
  try {
    r = await post(url, {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': `${ctx.productName}-notifier`,
      },
      body,
      timeoutMs: ctx.settings.timeoutMs,
      ca: ctx.ca,
      auth: { user: cfg.accountSid, password: cfg.authToken },
    });
  } catch (e) {
    throw new SendError(`Twilio at ${url.origin} is unreachable: ${(e as Error).message}`);
  }
  if (r.status >= 200 && r.status < 300) return;
  throw new SendError(`Twilio answered HTTP ${r.status}: ${twilioReason(r.body)}`, {
    retryAfterMs: retryAfterMs(r.headers),
  });
}

function twilioReason(body: string): string {
  try {
    const e = JSON.parse(body) as { code?: number; message?: string };
    if (typeof e.message === 'string') return `${e.message}${e.code !== undefined ? ` (code ${e.code})` : ''}`;
  } catch {
    // not Twilio's JSON error: show what came back
  }
  return excerpt(body) || 'no details';
}
