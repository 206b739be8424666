/** What the traffic routes and the host's traffic area module (runtime/areas/traffic.ts) share. */
import * as z from 'zod';

export { applyReconcile, describeReport, readDevices, type ApplyReport } from './state';
export { listRules } from './store';

/** `settings.traffic` of the host config. */
export const trafficSettings = z.strictObject({
  /**
   * Re-apply the stored rules at start (tc state does not survive a reboot). Default: on in live
   * and record mode, off in replay mode, whose fixtures describe one fixed moment.
   */
  reconcileOnStart: z.boolean().optional(),
});
export type TrafficSettings = z.output<typeof trafficSettings>;
