/**
 * What the metrics route and the host's metrics area (runtime/areas/metrics.ts) share. The
 * registry is the host's (runtime/ops/metrics.ts): it sees every request and command.
 */
import * as z from 'zod';

export const METRICS_SCRAPE_OP = 'metrics/scrape';

/** Prometheus text exposition format 0.0.4 */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export const scrapeResult = z.object({ text: z.string() });
export type ScrapeResult = z.output<typeof scrapeResult>;

/** `settings.metrics`: none yet (the config file may give `{}`). */
export const metricsSettings = z.strictObject({});
