/**
 * What the health routes and the host's health area (runtime/areas/health.ts) share: the op
 * names and what they answer. The report is built by the host (runtime/ops/health.ts): routes
 * cannot see the database file, the isolate or the jobs.
 */
import * as z from 'zod';

export const HEALTH_REPORT_OP = 'health/report';
export const HEALTH_VERSION_OP = 'health/version';

export const healthResult = z.object({
  /** `down` (answered 503): the database or the isolate is not there; `degraded`: deliveries are failing */
  status: z.enum(['ok', 'degraded', 'down']),
  version: z.string(),
  uptimeS: z.number().int().min(0),
  db: z.enum(['ok', 'unavailable']),
  /** null: the routes run in the host's process (no isolate) */
  isolate: z.enum(['alive', 'dead', 'unresponsive']).nullable(),
  outbox: z.object({
    /** deliveries waiting to go out */
    pending: z.number().int().min(0),
    /** of those, how many failed at least once and wait for a retry */
    failing: z.number().int().min(0),
  }),
  jobs: z.object({ running: z.number().int().min(0) }),
});
export type HealthResult = z.output<typeof healthResult>;

export const versionResult = z.object({ version: z.string() });

/** `settings.health`: none yet (the config file may give `{}`). */
export const healthSettings = z.strictObject({});
