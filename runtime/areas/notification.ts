import { defineArea } from './types';
import { notificationOps } from './notification/ops';
import { deliverySettingsSchema, type DeliverySettings } from './notification/settings';
import { DeliveryWorker } from './notification/worker';

/**
 * Notification agents: the test-send op, and the worker that delivers the events outbox to the
 * enabled agents (started when the server listens, stopped before the DB closes).
 */
export default defineArea<DeliverySettings>({
  name: 'notification',
  settings: deliverySettingsSchema,
  // read only: outgoing TLS also trusts the appliance's own CAs (the certificate area manages them)
  paths: { caCertificates: { default: '/usr/local/share/ca-certificates', kind: 'dir' } },
  setup(host) {
    const notify = {
      db: host.db,
      settings: host.settings,
      hostId: host.hostId,
      productName: host.config.productName,
      caDir: host.config.paths.caCertificates,
    };
    const worker = new DeliveryWorker({ ...notify, events: host.events, log: host.log });
    return {
      ops: notificationOps(notify),
      onStart: () => worker.start(),
      onStop: () => worker.stop(),
    };
  },
});
