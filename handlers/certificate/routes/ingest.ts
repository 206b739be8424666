import { ApiError, issuesText } from '../../core/errors';
import { route } from '../../core/route';
import { INGEST_OP, PIECES, type IngestResult } from '../contract';
import { DEMO_NEW_CHAIN } from '../examples';
import { ingestBody } from '../requests';
import { ingestAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/certificate/ingest',
  permission: 'certificate:manage',
  summary:
    "Check and swap in new TLS pieces, reload TLS; unless committed within the answer's confirmationTimeout seconds (settings.certificate.commitWindowSeconds) the previous pieces come back",
  body: ingestBody,
  response: ingestAnswer,
  examples: [{ summary: 'a new chain and key (commit it within the window)', body: { pieces: DEMO_NEW_CHAIN } }],
  async handler({ body, system, events }) {
    const r = await system.op<IngestResult>(INGEST_OP, { pieces: body.pieces });
    if (!r.ok) {
      const issues = r.problems.map((p) => ({ path: `body.pieces.${p.piece}`, message: p.message }));
      throw new ApiError('validation_failed', `the pieces were not changed: ${issuesText(issues)}`, { issues });
    }
    await events.send({
      kind: 'certificate.tls.ingested',
      data: { pieces: PIECES.filter((p) => body.pieces[p] !== undefined), confirmationTimeout: r.confirmationTimeout },
    });
    return { confirmationTimeout: r.confirmationTimeout, resolutions: r.resolutions };
  },
});
