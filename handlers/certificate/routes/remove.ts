import { route } from '../../core/route';
import { TrustRemoveBodySchema } from '../requests';
import { TrustUpdateResponse } from '../schemas';
import { applyTrustStore, readTrusted } from '../trust';

export default route({
  method: 'POST',
  path: '/certificate/remove',
  permission: 'certificate:manage',
  summary: 'Remove <name>.crt from the trust store and run update-ca-certificates --fresh',
  body: TrustRemoveBodySchema,
  response: TrustUpdateResponse,
  lock: 'certificate-trust',
  examples: [{ summary: 'stop trusting the partner CA', body: { name: 'partner-ca' } }],
  async handler({ body, system, vars, events }) {
    const file = (await readTrusted(system, body.name)).path;
    await system.removeFile(file, { backup: true });
    // on failure the file goes back: the request failed, so the certificate stays trusted
    const output = await applyTrustStore(system, vars, true, () => system.restoreFile(file));
    await events.send({ kind: 'certificate.trusted.removed', data: { name: body.name } });
    return output;
  },
});
