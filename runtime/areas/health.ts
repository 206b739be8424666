import { HEALTH_REPORT_OP, HEALTH_VERSION_OP, healthSettings } from '../../handlers/health/contract';
import { SystemRefusal } from '../system/types';
import { telemetryOf } from '../ops/telemetry';
import { defineArea } from './types';

/**
 * Health and version: answered from the host's telemetry (runtime/ops/telemetry.ts), which knows
 * the database file, the isolate and the jobs. Public routes: no token.
 */
export default defineArea({
  name: 'health',
  settings: healthSettings,
  setup: (host) => {
    const telemetry = () => {
      const t = telemetryOf(host.db);
      if (!t) throw new SystemRefusal('not_implemented', 'this host keeps no telemetry');
      return t;
    };
    return {
      ops: {
        [HEALTH_REPORT_OP]: () => telemetry().health.report(),
        [HEALTH_VERSION_OP]: () => Promise.resolve({ version: telemetry().version }),
      },
    };
  },
});
