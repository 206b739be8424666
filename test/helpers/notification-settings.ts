/** settings.notification as the host reads it at start (runtime/host.ts areaSettings), for tests that build the area's parts by hand. */
import notification from '../../runtime/areas/notification';
import type { DeliverySettings } from '../../runtime/areas/notification/settings';
import { areaSettings } from '../../runtime/host';

export const deliverySettings = (settings: Record<string, unknown>): DeliverySettings =>
  areaSettings(notification as Parameters<typeof areaSettings>[0], settings) as DeliverySettings;
