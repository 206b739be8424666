import { randomUUID } from 'node:crypto';

/**
 * The notification every agent delivers for one event. Webhooks receive it as the JSON body
 * (the Standard Webhooks payload shape `type`/`timestamp`/`data`, plus `id`, `sequence` and
 * `host`); mail and SMS render it as text.
 */
export interface Notification {
  /** The event id: stable across retries (the webhook-id, the mail's X-Ballast-Event-Id). */
  id: string;
  /**
   * The event's `seq`: increases with every event this host records (gaps where an event went to
   * no agent), so a receiver can order and deduplicate (the mail's X-Ballast-Event-Sequence).
   * Absent on the test message, which is not an event.
   */
  sequence?: number;
  /** The event kind, e.g. `s3.share.created`. */
  type: string;
  /** When the event happened, ISO 8601 UTC. */
  timestamp: string;
  /** This machine's host id (the agents' `hostid`). */
  host: string;
  data: Record<string, unknown>;
}

export interface StoredEvent {
  id: string;
  seq: number;
  kind: string;
  at: number;
  data: Record<string, unknown>;
}

export const TEST_KIND = 'notification.agent.tested';

export function notificationOf(e: StoredEvent, hostId: string): Notification {
  return {
    id: e.id,
    sequence: e.seq,
    type: e.kind,
    timestamp: new Date(e.at).toISOString(),
    host: hostId,
    data: e.data,
  };
}

/** The test route's message: never stored as an event, so it has its own id. */
export function testNotification(agentId: number, hostId: string, productName: string, now = Date.now()): Notification {
  return {
    id: `test_${randomUUID()}`,
    type: TEST_KIND,
    timestamp: new Date(now).toISOString(),
    host: hostId,
    data: { agentId, message: `This is a test notification from ${productName} on ${hostId}.` },
  };
}

/** Words of a kind that are names of things, written as such in a title. */
const ACRONYMS = new Set(['s3', 'tls', 'dfs', 'lnet', 'flr', 'acl', 'fs']);

/** `s3.share.created` → `S3 share created`; `certificate.tls.rolled_back` → `Certificate TLS rolled back`. */
export function titleOf(kind: string): string {
  const words = kind
    .split(/[._]/)
    // `pod.pod.paused`: the object that is the area itself is said once
    .filter((w, i, all) => i === 0 || w !== all[i - 1])
    .map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w))
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function subjectOf(n: Notification, productName: string): string {
  return `[${productName} ${n.host}] ${titleOf(n.type)}`;
}

export function mailTextOf(n: Notification, productName: string): string {
  return [
    `${titleOf(n.type)} on ${n.host}.`,
    '',
    `Event: ${n.type}`,
    `Time:  ${n.timestamp}`,
    `Host:  ${n.host}`,
    `Id:    ${n.id}`,
    '',
    'Data:',
    JSON.stringify(n.data, null, 2),
    '',
    `-- ${productName} notifications`,
    '',
  ].join('\n');
}

const SMS_MAX = 320;

/** One short line: what happened, where, and the event's scalar fields. Two SMS segments at most. */
export function smsTextOf(n: Notification, productName: string): string {
  const fields = Object.entries(n.data)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  const text = `${productName} ${n.host}: ${titleOf(n.type)} (${n.type})${fields ? ` ${fields}` : ''} at ${n.timestamp}`;
  return text.length <= SMS_MAX ? text : `${text.slice(0, SMS_MAX - 1)}…`;
}
