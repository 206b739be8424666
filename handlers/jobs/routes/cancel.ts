import { ANY_TOKEN } from '../../core/auth';
import { route } from '../../core/route';
import { JOBS_OPS } from '../contract';
import { jobParams } from '../requests';
import { jobAnswer } from '../responses';
import { viewerOf } from '../viewer';

export default route({
  method: 'POST',
  path: '/jobs/:id/cancel',
  permission: ANY_TOKEN,
  summary:
    'Cancel a running job (its own token with the area’s manage permission, or `*`): its commands get SIGTERM (SIGKILL after 2 s), nothing more starts for it, and what it left half done is rolled back through the intent journal; answers the job once it ended (`cancelled`, with `undo`). 409 when it is not running',
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
    return system.op(JOBS_OPS.cancel, { viewer: viewerOf(principal), id: params.id });
  },
});
