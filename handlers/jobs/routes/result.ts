import { ANY_TOKEN } from '../../core/auth';
import { JsonText, route } from '../../core/route';
import { JOBS_OPS, type JobResult } from '../contract';
import { jobParams } from '../requests';
import { viewerOf } from '../viewer';
import * as z from 'zod';

export default route({
  method: 'GET',
  path: '/jobs/:id/result',
  permission: ANY_TOKEN,
  summary:
    'The whole answer of a job that succeeded, exactly as the route answers it synchronously (large answers are not inlined in the job); 404 while it runs or when it failed',
  params: jobParams,
  response: z.unknown().describe('the answer of the job’s route (see that route)'),
  examples: [
    {
      summary: 'A job id nobody started',
      params: { id: '00000000-0000-4000-8000-000000000000' },
      status: 404,
    },
  ],
  async handler({ params, principal, system }) {
    const r = await system.op<JobResult>(JOBS_OPS.result, { viewer: viewerOf(principal), id: params.id });
    return new JsonText(r.text);
  },
});
