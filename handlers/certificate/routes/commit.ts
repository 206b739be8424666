import { route } from '../../core/route';
import { COMMIT_OP } from '../contract';
import { CommitResponse } from '../schemas';

export default route({
  method: 'POST',
  path: '/certificate/commit',
  permission: 'certificate:manage',
  summary: 'Keep the ingested TLS pieces (409 when nothing is waiting for a commit)',
  response: CommitResponse,
  // On a fresh demo nothing waits for a commit (the manifest lists commit before ingest): 409.
  // After the ingest example, within the demo's 30 s window, the same request answers {}.
  examples: [
    {
      summary: 'nothing is waiting for a commit on a fresh demo (run the ingest example first, then this answers {})',
      status: 409,
    },
  ],
  async handler({ system, events }) {
    await system.op<{ pieces: string[] }>(COMMIT_OP, {});
    await events.send({ kind: 'certificate.committed', data: {} });
    return {};
  },
});
