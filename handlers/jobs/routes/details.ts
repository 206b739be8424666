import { ANY_TOKEN } from '../../core/auth';
import { route } from '../../core/route';
import { JOBS_OPS } from '../contract';
import { jobParams } from '../requests';
import { jobAnswer } from '../responses';
import { viewerOf } from '../viewer';

export default route({
  method: 'GET',
  path: '/jobs/:id',
  permission: ANY_TOKEN,
  summary:
    'One job: its state, progress, the route’s own answer or error, what a cancel rolled back, and its log tail (another token’s job is a 404)',
  params: jobParams,
  response: jobAnswer,
  examples: [
    {
      summary: 'A job id nobody started',
      params: { id: '00000000-0000-4000-8000-000000000000' },
      status: 404,
    },
  ],
  async handler({ params, principal, system }) {
    return system.op(JOBS_OPS.get, { viewer: viewerOf(principal), id: params.id });
  },
});
