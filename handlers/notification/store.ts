import { notificationSettings } from './contract';
import { areaSettings } from '../core/settings';
import type * as z from 'zod';
import type { D1Database } from '../core/bindings';
import { ApiError, issuesOf, issuesText, notFound, validationFailed } from '../core/errors';
import type { Vars } from '../core/vars';
import { isLocalHost } from './local-target';
import type { SystemClient } from '../core/system';
import { agentConfig, SECRET_FIELDS, SECRET_STAND_IN, type AgentType } from './agent-config';
import { SECRET_MASK } from './mask';
import type { Agent } from './responses';
import {
  isMaskPart,
  isSealedPart,
  mapUrlSecrets,
  maskUrl,
  resolveMaskedUrl,
  sealUrl,
  UrlMaskError,
} from './url-secrets';

/** A row of notification_agents (migration 1). `hostid` is not stored: it is this machine's id. */
export interface AgentRow {
  id: number;
  type: AgentType;
  enabled: number;
  json: string;
  unix_time: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'id, type, enabled, json, unix_time, created_at, updated_at';

export async function listAgentRows(db: D1Database): Promise<AgentRow[]> {
  return (await db.prepare(`SELECT ${COLUMNS} FROM notification_agents ORDER BY id`).all<AgentRow>()).results;
}

export async function getAgentRow(db: D1Database, id: number): Promise<AgentRow> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM notification_agents WHERE id = ?`).bind(id).first<AgentRow>();
  if (!row) throw notFound(`no notification agent with id ${id}`);
  return row;
}

/** The spec's agent object, with every secret replaced by the mask. */
export function toAgent(row: AgentRow, hostId: string): Agent {
  const json: Record<string, unknown> = JSON.parse(row.json);
  for (const f of SECRET_FIELDS[row.type]) if (json[f] !== undefined) json[f] = SECRET_MASK;
  if (row.type === 'webhook' && typeof json.url === 'string') json.url = maskUrl(json.url);
  return {
    id: row.id,
    hostid: hostId,
    type: row.type,
    enabled: row.enabled === 1,
    json,
    unix_time: String(row.unix_time),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  } as Agent;
}

/**
 * The configuration an update will store: secrets the client omitted (or sent back as the mask)
 * keep their stored value, as long as the type stays the same. Then the whole object is
 * validated against `type`, and issues are reported under `body.json`.
 */
export function resolveUpdatedConfig(
  type: AgentType,
  incoming: Record<string, unknown>,
  stored: { type: AgentType; json: Record<string, unknown> },
): Record<string, unknown> {
  const next = { ...incoming };
  const kept: Record<string, unknown> = {};
  const standIn: Record<string, unknown> = {};
  for (const f of SECRET_FIELDS[type]) {
    // a new value, unless it is the mask or the stored (sealed) value a merge carried over
    if (next[f] !== undefined && next[f] !== SECRET_MASK && next[f] !== stored.json[f]) continue;
    if (stored.type === type && stored.json[f] !== undefined) kept[f] = stored.json[f];
    delete next[f];
  }
  if (type === 'webhook' && typeof next.url === 'string') {
    const storedUrl = stored.type === 'webhook' && typeof stored.json.url === 'string' ? stored.json.url : undefined;
    // the stored URL a merge carried over, or the client's with its masked credentials taken from it
    let url = next.url;
    try {
      if (url !== storedUrl) url = resolveMaskedUrl(url, storedUrl);
    } catch (e) {
      if (e instanceof UrlMaskError) throw validationFailed('body.json.url', e.message);
      throw e;
    }
    if (url !== next.url || url === storedUrl) {
      kept.url = url;
      // checked as the client sent it: its masks (or the stored sealed parts) stand for valid values
      const sent = next.url;
      standIn.url = mapUrlSecrets(sent, (raw) =>
        isMaskPart(raw) || (sent === storedUrl && isSealedPart(raw)) ? 'kept' : raw,
      );
      delete next.url;
    }
  }
  return validateConfig(type, next, kept, standIn);
}

/**
 * A new configuration's secrets sealed with the host's key before they are stored; secrets kept
 * from storage are sealed already (or, stored before sealing existed, are sealed now).
 */
export async function sealSecrets(
  system: SystemClient,
  type: AgentType,
  json: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const out = { ...json };
  // the credentials inside a webhook URL, part by part (./url-secrets.ts)
  if (type === 'webhook' && typeof out.url === 'string') out.url = await sealUrl(out.url, (v) => system.sealSecrets(v));
  const fields = SECRET_FIELDS[type].filter(
    (f) => typeof json[f] === 'string' && !String(json[f]).startsWith('enc:v1:'),
  );
  if (fields.length === 0) return out;
  const sealed = await system.sealSecrets(fields.map((f) => String(json[f])));
  fields.forEach((f, i) => (out[f] = sealed[i]));
  return out;
}

/** Whether two configurations hold the same keys and values, whatever their key order. */
export function sameConfig(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const canon = (o: Record<string, unknown>) =>
    JSON.stringify(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  return canon(a) === canon(b);
}

/** 400 for a webhook URL naming this machine, unless settings.notification.allowLocalTargets. */
export function checkWebhookTarget(type: AgentType, json: Record<string, unknown>, vars: Vars): void {
  if (type !== 'webhook' || typeof json.url !== 'string') return;
  const allowed = areaSettings(vars, 'notification', notificationSettings).allowLocalTargets;
  if (allowed) return;
  const host = new URL(json.url).hostname;
  if (isLocalHost(host)) {
    throw validationFailed(
      'body.json.url',
      `${host} is a loopback, link-local or unspecified address; webhooks go to other machines (settings.notification.allowLocalTargets allows it)`,
    );
  }
}

/**
 * Validates a configuration against its type; `kept` are stored (sealed) secrets, which are
 * replaced during the check by `standIn[field]` (default: a valid value of the type's secret)
 * and put back after it.
 */
export function validateConfig(
  type: AgentType,
  json: unknown,
  kept: Record<string, unknown> = {},
  standIn: Record<string, unknown> = {},
): Record<string, unknown> {
  const checked =
    Object.keys(kept).length && json !== null && typeof json === 'object'
      ? {
          ...json,
          ...Object.fromEntries(
            Object.keys(kept).map((f) => [f, Object.hasOwn(standIn, f) ? standIn[f] : SECRET_STAND_IN[type]]),
          ),
        }
      : json;
  const r = (agentConfig[type] as z.ZodType).safeParse(checked);
  if (!r.success) {
    const issues = issuesOf('body.json', r.error);
    throw new ApiError('validation_failed', `invalid body: ${issuesText(issues)}`, { issues });
  }
  return { ...(r.data as Record<string, unknown>), ...kept };
}
