import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks symmetric signature (scheme v1): HMAC-SHA256 over `${id}.${timestamp}.${body}`
 * with the base64-decoded bytes after `whsec_` as the key, sent as `v1,<base64>`.
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
