import { route } from '../../core/route';
import { parseUpdateCaCertificates } from '../parse/update-ca-certificates';
import { TrustRemoveBodySchema } from '../requests';
import { TrustUpdateResponse } from '../schemas';
import { readTrusted, updateArgv } from '../trust';

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
    const argv = updateArgv(vars, true);
    let output: string;
    try {
      const r = await system.run(argv);
      parseUpdateCaCertificates(r.stdout, r.stderr);
      output = r.stdout;
    } catch (e) {
      // put the file back: the request failed, so the certificate stays trusted
      await system.restoreFile(file);
      throw e;
    }
    await events.send({ kind: 'certificate.trusted.removed', data: { name: body.name } });
    return output;
  },
});
