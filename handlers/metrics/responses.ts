import * as z from 'zod';

/** GET /metrics: the Prometheus text exposition format (not JSON) */
export const metricsAnswer = z.string();
