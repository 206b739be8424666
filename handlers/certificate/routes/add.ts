import { validationFailed } from '../../core/errors';
import { route } from '../../core/route';
import { INSPECT_OP, TRUST_OP, type InspectResult, type TrustPayload, type TrustResult } from '../contract';
import { DEMO_LAB_CA } from '../examples';
import { trustAddBody } from '../requests';
import { trustUpdateAnswer } from '../responses';
import { trustAnswer, trustProblem } from '../trust';

export default route({
  method: 'POST',
  path: '/certificate/add',
  permission: 'certificate:manage',
  long: { budgetS: 120, phases: ['trust'] },
  summary: 'Add a CA certificate to the trust store as <name>.crt and run update-ca-certificates',
  body: trustAddBody,
  response: trustUpdateAnswer,
  lock: 'certificate-trust',
  examples: [
    {
      summary: 'trust the lab CA',
      body: { name: 'lab-ca', certificate: DEMO_LAB_CA },
      then: [{ method: 'GET', path: '/certificate', shows: ['lab-ca.crt'] }],
    },
  ],
  async handler({ body, system }) {
    const info = await system.op<InspectResult>(INSPECT_OP, { pem: body.certificate });
    if (info.error) throw validationFailed('body.certificate', info.error);
    const keys = info.otherBlocks.filter((l) => l.includes('PRIVATE KEY'));
    if (keys.length)
      throw validationFailed(
        'body.certificate',
        'contains a private key; the trust store takes certificates only (and the key is now exposed: replace it)',
      );
    if (info.otherBlocks.length)
      throw validationFailed(
        'body.certificate',
        `holds a ${info.otherBlocks[0]} block; only CERTIFICATE blocks are accepted`,
      );
    if (info.certificates.length > 1)
      throw validationFailed(
        'body.certificate',
        `holds ${info.certificates.length} certificates; add each CA under its own name (update-ca-certificates links single-certificate files only)`,
      );
    if (info.certificates.length === 1 && info.layout) throw validationFailed('body.certificate', info.layout);
    const problem = trustProblem(info.certificates, {
      allowLeaf: body.allowLeaf,
      allowExpired: body.allowExpired,
      now: new Date(),
    });
    if (problem) throw problem;
    // the host refuses a name or a certificate already trusted (409), writes the file, runs the
    // tool and records the event; a failed run is put back
    await system.progress({ phase: 'trust', message: 'update-ca-certificates' });
    const r = await system.op<TrustResult>(TRUST_OP, {
      action: 'add',
      name: body.name,
      pem: info.normalized,
    } satisfies TrustPayload);
    return trustAnswer(r, 'add');
  },
});
