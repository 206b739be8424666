import { route } from '../../core/route';
import { TRUST_OP, type TrustPayload, type TrustResult } from '../contract';
import { trustRemoveBody } from '../requests';
import { trustUpdateAnswer } from '../responses';
import { trustAnswer } from '../trust';

export default route({
  method: 'POST',
  path: '/certificate/remove',
  permission: 'certificate:manage',
  long: { budgetS: 120, phases: ['trust'] },
  summary: 'Remove <name>.crt from the trust store and run update-ca-certificates --fresh',
  body: trustRemoveBody,
  response: trustUpdateAnswer,
  lock: 'certificate-trust',
  examples: [{ summary: 'stop trusting the partner CA', body: { name: 'partner-ca' } }],
  async handler({ body, system }) {
    // 404 when absent; on a failed run the host puts the file back: the certificate stays trusted
    await system.progress({ phase: 'trust', message: 'update-ca-certificates' });
    const r = await system.op<TrustResult>(TRUST_OP, { action: 'remove', name: body.name } satisfies TrustPayload);
    return trustAnswer(r, 'remove');
  },
});
