import { route } from '../../core/route';
import { COMMIT_OP } from '../contract';
import { CommitResponse } from '../schemas';

export default route({
  method: 'POST',
  path: '/certificate/commit',
  permission: 'certificate:manage',
  summary: 'Keep the ingested TLS pieces (409 when nothing is waiting for a commit)',
  response: CommitResponse,
  examples: [{ summary: 'keep the pieces of the ingest example (run it first)' }],
  async handler({ system, events }) {
    await system.op<{ pieces: string[] }>(COMMIT_OP, {});
    await events.send({ kind: 'certificate.committed', data: {} });
    return {};
  },
});
