import { issuesOf, issuesText } from '../../../handlers/core/errors';
import {
  agentConfig,
  openUrl,
  type AgentType,
  type SmsConfig,
  type SmtpConfig,
  type WebhookConfig,
  SECRET_FIELDS,
  urlSecretValues,
} from '../../../handlers/notification/contract';
import { appendFile } from 'node:fs/promises';
import type { Notification } from './payload';
import { redact } from './redact';
import { SendError } from './send-error';
import type { SendContext } from './senders/context';
import { sendMail } from './senders/smtp';
import { sendSms } from './senders/sms';
import { sendWebhook } from './senders/webhook';

/** An agent as the host sends through it: its stored configuration, parsed by the area's schemas. */
export type DeliveryAgent =
  | { id: number; type: 'sms'; config: SmsConfig }
  | { id: number; type: 'smtp'; config: SmtpConfig }
  | { id: number; type: 'webhook'; config: WebhookConfig };

/** Parses a stored agent; a configuration the schemas refuse (hand-edited DB) cannot be sent. */
export function deliveryAgent(
  id: number,
  type: string,
  json: string,
  open: (sealed: string) => string = (s) => s,
): DeliveryAgent {
  if (!(type in agentConfig)) throw new SendError(`agent ${id} has an unknown type ${type}`, { permanent: true });
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new SendError(`agent ${id} has a configuration that is not JSON`, { permanent: true });
  }
  // secrets are stored sealed (runtime/system/secret-box.ts): opened here, for the send only
  if (parsed !== null && typeof parsed === 'object') {
    const cfg = parsed as Record<string, unknown>;
    for (const f of SECRET_FIELDS[type as AgentType]) {
      const v = cfg[f];
      if (typeof v !== 'string') continue;
      try {
        cfg[f] = open(v);
      } catch {
        throw new SendError(
          `agent ${id}: its stored ${f} cannot be opened with this host's key (stateDir/secret.key)`,
          { permanent: true },
        );
      }
    }
    // the credentials inside a webhook URL are sealed part by part (url-secrets.ts)
    if (type === 'webhook' && typeof cfg.url === 'string') {
      try {
        cfg.url = openUrl(cfg.url, open);
      } catch {
        throw new SendError(
          `agent ${id}: the credentials in its stored url cannot be opened with this host's key (stateDir/secret.key)`,
          { permanent: true },
        );
      }
    }
  }
  // The issue text names paths and the schemas' own messages, never an input value (no message
  // of these schemas quotes what it refused), so a secret in a hand-edited row stays out of it.
  const r = agentConfig[type as AgentType].safeParse(parsed);
  if (!r.success)
    throw new SendError(`agent ${id} has an invalid configuration: ${issuesText(issuesOf('', r.error))}`, {
      permanent: true,
    });
  return { id, type, config: r.data } as DeliveryAgent;
}

/** The values an error about this agent must never show. */
function secretsOf(a: DeliveryAgent): { secrets: string[]; users: string[] } {
  switch (a.type) {
    case 'sms':
      return { secrets: [a.config.authToken], users: [a.config.accountSid] };
    case 'smtp':
      return { secrets: [a.config.password], users: [a.config.username] };
    case 'webhook': {
      const own = a.config.secret ? [a.config.secret, a.config.secret.slice('whsec_'.length)] : [];
      return { secrets: [...own, ...urlSecretValues(a.config.url)], users: [] };
    }
  }
}

/** Sends one notification through one agent. Rejects with a SendError whose message is redacted. */
export async function sendThrough(agent: DeliveryAgent, n: Notification, ctx: SendContext): Promise<void> {
  if (ctx.settings.sinkFile !== undefined) return sink(ctx.settings.sinkFile, agent, n);
  try {
    switch (agent.type) {
      case 'sms':
        return await sendSms(agent.config, n, ctx);
      case 'smtp':
        return await sendMail(agent.config, n, ctx);
      case 'webhook':
        return await sendWebhook(agent.config, n, ctx);
    }
  } catch (e) {
    const { secrets, users } = secretsOf(agent);
    const err = e instanceof SendError ? e : new SendError((e as Error)?.message ?? String(e));
    const message = redact(err.message, secrets, users);
    throw new SendError(message, { permanent: err.permanent, retryAfterMs: err.retryAfterMs });
  }
}

/** settings.notification.sinkFile: one JSON line per notification; the agent's configuration stays out. */
async function sink(file: string, agent: DeliveryAgent, n: Notification): Promise<void> {
  const line = JSON.stringify({ at: new Date().toISOString(), agentId: agent.id, type: agent.type, notification: n });
  try {
    await appendFile(file, `${line}\n`, { mode: 0o600 });
  } catch (e) {
    throw new SendError(
      `the notification sink ${file} cannot be written: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    );
  }
}
