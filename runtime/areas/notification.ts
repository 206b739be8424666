import {
  notificationSettings,
  SECRET_FIELDS,
  sealUrlSync,
  type AgentType,
  type NotificationSettings,
} from '../../handlers/notification/contract';
import { defineArea, type AreaHost } from './types';
import { notificationOps } from './notification/ops';
import { DeliveryWorker } from './notification/worker';

/**
 * Notification agents: the test-send op, and the worker that delivers the events outbox to the
 * enabled agents (started when the server listens, stopped before the DB closes).
 */
export default defineArea<NotificationSettings>({
  name: 'notification',
  settings: notificationSettings,
  // read only: outgoing TLS also trusts the appliance's own CAs (the certificate area manages them)
  paths: { caCertificates: { default: '/usr/local/share/ca-certificates', kind: 'dir' } },
  setup(host) {
    const notify = {
      db: host.db,
      settings: host.settings,
      hostId: host.hostId,
      productName: host.config.productName,
      caDir: host.config.paths.caCertificates,
      openSecret: (sealed: string) => host.secrets.open(sealed),
    };
    sealStoredSecrets(host);
    const worker = new DeliveryWorker({ ...notify, events: host.events, log: host.log });
    return {
      ops: notificationOps(notify),
      onStart: () => worker.start(),
      onStop: () => worker.stop(),
    };
  },
});

/** Agents stored before secrets were sealed: their secrets are sealed now, once, at start. */
function sealStoredSecrets(host: AreaHost<NotificationSettings>): void {
  const rows = host.db.prepare('SELECT id, type, json FROM notification_agents').all() as {
    id: number;
    type: string;
    json: string;
  }[];
  const update = host.db.prepare('UPDATE notification_agents SET json = ? WHERE id = ?');
  for (const row of rows) {
    const fields = SECRET_FIELDS[row.type as AgentType];
    if (!fields) continue;
    let cfg: Record<string, unknown>;
    try {
      cfg = JSON.parse(row.json) as Record<string, unknown>;
    } catch {
      continue; // the sender reports it
    }
    let changed = false;
    for (const f of fields) {
      const v = cfg[f];
      if (typeof v === 'string' && !v.startsWith('enc:v1:')) {
        cfg[f] = host.secrets.seal(v);
        changed = true;
      }
    }
    // the credentials inside a webhook URL (stored in clear before issue 27 item 11)
    if (row.type === 'webhook' && typeof cfg.url === 'string') {
      const url = sealUrlSync(cfg.url, (v) => host.secrets.seal(v));
      if (url !== cfg.url) {
        cfg.url = url;
        changed = true;
      }
    }
    if (changed) update.run(JSON.stringify(cfg), row.id);
  }
}
