import { JsonText, route } from '../../core/route';
import { METRICS_SCRAPE_OP, PROMETHEUS_CONTENT_TYPE, type ScrapeResult } from '../contract';
import { metricsAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/metrics',
  permission: 'metrics:read',
  summary: 'Prometheus metrics: requests, commands, outbox, jobs, audit rows, database size, event-loop lag, memory',
  style: { contentType: PROMETHEUS_CONTENT_TYPE },
  examples: [{ summary: "the demo's counters" }],
  response: metricsAnswer,
  async handler({ system }) {
    // the exposition text as the host's registry wrote it: no JSON around it
    return new JsonText((await system.op<ScrapeResult>(METRICS_SCRAPE_OP, {})).text);
  },
});
