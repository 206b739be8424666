import { METRICS_SCRAPE_OP, metricsSettings } from '../../handlers/metrics/contract';
import { SystemRefusal } from '../system/types';
import { telemetryOf } from '../ops/telemetry';
import { defineArea } from './types';

/** Prometheus metrics: the host's registry (runtime/ops/metrics.ts) as text. */
export default defineArea({
  name: 'metrics',
  settings: metricsSettings,
  setup: (host) => ({
    ops: {
      [METRICS_SCRAPE_OP]: async () => {
        const t = telemetryOf(host.db);
        if (!t) throw new SystemRefusal('not_implemented', 'this host keeps no metrics');
        return { text: await t.metrics.text() };
      },
    },
  }),
});
