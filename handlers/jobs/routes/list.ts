import { ANY_TOKEN } from '../../core/auth';
import { route } from '../../core/route';
import { JOBS_OPS } from '../contract';
import { listJobsQuery } from '../requests';
import { jobListAnswer } from '../responses';
import { viewerOf } from '../viewer';

export default route({
  method: 'GET',
  path: '/jobs',
  permission: ANY_TOKEN,
  summary:
    'Long operations (formatting, hashing, pods, Lustre targets…) as jobs, newest first: this token’s own, with their area’s read permission; a `*` token sees all',
  query: listJobsQuery,
  response: jobListAnswer,
  examples: [
    { summary: 'The jobs this token can see (none on a fresh demo)' },
    {
      summary: 'After a synchronous make_directory: its job, succeeded',
      query: { state: 'succeeded', area: 'fs' },
      before: [
        {
          method: 'POST',
          path: '/fs/make_directory',
          body: { destination: '/srv/data/projects', options: ['-m', '2770', '-g', 'staff'] },
        },
      ],
    },
  ],
  async handler({ query, principal, system }) {
    return system.op(JOBS_OPS.list, {
      viewer: viewerOf(principal),
      state: query.state,
      area: query.area,
      mine: query.mine === 'true',
      limit: query.limit,
      before: query.before,
    });
  },
});
