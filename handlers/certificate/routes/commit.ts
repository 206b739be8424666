import { route } from '../../core/route';
import { COMMIT_OP } from '../contract';
import { DEMO_NEW_CHAIN } from '../examples';
import { commitAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/certificate/commit',
  permission: 'certificate:manage',
  summary: 'Keep the ingested TLS pieces (409 when nothing is waiting for a commit)',
  response: commitAnswer,
  examples: [
    {
      summary: 'after an ingest, within its window: the new pieces are kept',
      before: [{ method: 'POST', path: '/certificate/ingest', body: { pieces: DEMO_NEW_CHAIN } }],
    },
    {
      summary: 'nothing is waiting for a commit on a fresh demo',
      status: 409,
    },
  ],
  async handler({ system, events }) {
    await system.op<{ pieces: string[] }>(COMMIT_OP, {});
    await events.send({ kind: 'certificate.tls.committed', data: {} });
    return {};
  },
});
