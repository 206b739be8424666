import * as z from 'zod';
import { SECRET_MASK } from './mask';
import { clientUrlProblem } from './url-secrets';

/**
 * An agent's configuration (the spec's `json`) per type: the one source for validating what a
 * client sends (requests.ts), for the answers (responses.ts, secrets masked), and for the host's
 * delivery code (runtime/areas/notification/ reads stored configurations through them, via
 * contract.ts).
 */

export const AGENT_TYPES = ['sms', 'smtp', 'webhook'] as const;
export const agentType = z.enum(AGENT_TYPES, { error: 'must be sms, smtp or webhook' });
export type AgentType = z.infer<typeof agentType>;

/**
 * Write-only fields per type: masked in every response, kept on an update that omits them. A
 * webhook's `url` is not one, but the credentials in it are (./url-secrets.ts).
 */
export const SECRET_FIELDS = {
  sms: ['authToken'],
  smtp: ['password'],
  webhook: ['secret'],
} as const satisfies Record<AgentType, readonly string[]>;

/**
 * A value each secret field's schema accepts: stands in for a secret kept sealed in storage (which
 * the routes cannot open) while the rest of a configuration is validated.
 */
export const SECRET_STAND_IN: Record<AgentType, string> = {
  sms: 'sealed',
  smtp: 'sealed',
  webhook: `whsec_${'A'.repeat(32)}`,
};

/** "required" for a missing field, the type error otherwise: issue paths already name the field. */
const requiredError = (expected: string) => (iss: { input?: unknown }) =>
  iss.input === undefined ? 'required' : `must be ${expected}`;
const str = () => z.string({ error: requiredError('a string') });
/** A boolean whose error says "required" when missing, "must be a boolean" otherwise. */
export const bool = () => z.boolean({ error: requiredError('a boolean') });

const noLineBreak = (s: string) => !/[\r\n]/.test(s);
const secretValue = (max: number) =>
  str()
    .min(1, 'must not be empty')
    .max(max)
    .refine(
      (s) => s !== SECRET_MASK,
      `is the mask ${SECRET_MASK}, not a value: send the real secret, or omit it on update to keep the stored one`,
    );

/* ---- sms (Twilio) ---- */
const e164 = /^\+[1-9]\d{6,14}$/;
export const smsConfig = z.strictObject({
  accountSid: str().regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio account SID: AC followed by 32 hex digits'),
  authToken: secretValue(256),
  // A Twilio number in E.164, or an alphanumeric sender ID (1-11 letters/digits/spaces, one letter at least).
  fromPhoneNumber: str().refine(
    (s) => e164.test(s) || /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/.test(s),
    'must be an E.164 number such as +15551234567 or an alphanumeric sender ID',
  ),
  toPhoneNumber: str().regex(e164, 'must be an E.164 number such as +15551234567'),
});

/* ---- smtp ---- */
const ADDRESS = String.raw`[^\s@<>",;]+@[^\s@<>",;]+`;
const MAILBOX = new RegExp(`^(?:${ADDRESS}|[^<>\\r\\n]*<${ADDRESS}>)$`);
const mailbox = str().max(320).regex(MAILBOX, 'must be an e-mail address (a@b.example or "Name <a@b.example>")');
const recipients = z.union(
  [
    str()
      .max(4096)
      .refine(
        (s) => s.split(',').every((p) => MAILBOX.test(p.trim())),
        'must be an e-mail address or a comma-separated list of them',
      ),
    z.array(mailbox).min(1, 'must list at least one address').max(50),
  ],
  { error: requiredError('an e-mail address or a list of them') },
);
const PORT_MESSAGE = 'must be a port number 1-65535 (a number or a numeric string)';
const port = z
  .union([z.number(), z.string()], { error: (iss) => (iss.input === undefined ? 'required' : PORT_MESSAGE) })
  .refine(
    (p) => (typeof p === 'number' ? Number.isInteger(p) : /^\d{1,5}$/.test(p)) && Number(p) >= 1 && Number(p) <= 65535,
    PORT_MESSAGE,
  );
export const smtpConfig = z.strictObject({
  host: str()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9._:[\]-]+$/, 'must be a host name or an IP address'),
  to: recipients,
  from: mailbox,
  username: str().min(1, 'must not be empty').max(256).refine(noLineBreak, 'must not contain a line break'),
  password: secretValue(1024),
  port,
  /** Implicit TLS from the first byte (usually port 465). */
  secure: bool().optional(),
  /** Refuse to send unless STARTTLS upgrades the connection. */
  requireTLS: bool().optional(),
  /** Legacy name for `secure` that existing listings show; used when `secure` is absent. */
  ssl: bool().optional(),
});

/* ---- webhook ---- */
const httpUrl = str()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an absolute http:// or https:// URL');
/** Standard Webhooks symmetric secret: `whsec_` + base64 of 24-64 random bytes. */
const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const base64Bytes = (b64: string) => Math.floor((b64.replace(/=+$/, '').length * 3) / 4);
/** A URL a client sends: its credentials are real values, never the mask or a sealed value. */
const clientUrl = httpUrl.superRefine((s, ctx) => {
  const problem = clientUrlProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export const webhookConfig = z.strictObject({
  url: clientUrl,
  secret: secretValue(200)
    .refine(
      (s) => WHSEC.test(s) && base64Bytes(s.slice(6)) >= 24 && base64Bytes(s.slice(6)) <= 64,
      'must be whsec_ followed by the base64 of 24 to 64 bytes',
    )
    .optional(),
});

export const agentConfig = { sms: smsConfig, smtp: smtpConfig, webhook: webhookConfig } as const;
export type SmsConfig = z.infer<typeof smsConfig>;
export type SmtpConfig = z.infer<typeof smtpConfig>;
export type WebhookConfig = z.infer<typeof webhookConfig>;
export type AgentConfig = SmsConfig | SmtpConfig | WebhookConfig;
