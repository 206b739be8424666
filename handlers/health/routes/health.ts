import { route } from '../../core/route';
import { baseHeaders } from '../../core/http';
import { HEALTH_REPORT_OP, type HealthResult } from '../contract';
import { healthAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/health',
  permission: 'public',
  summary: 'The host is up: database, isolate, outbox backlog, running jobs (no token; 503 when down)',
  examples: [{ summary: 'the demo is healthy' }],
  response: healthAnswer,
  async handler({ system, vars, requestId }) {
    const report = await system.op<HealthResult>(HEALTH_REPORT_OP, {});
    if (report.status !== 'down') return report;
    // the same body, so a supervisor sees what is down
    return new Response(JSON.stringify(report), { status: 503, headers: baseHeaders(vars, requestId) });
  },
});
