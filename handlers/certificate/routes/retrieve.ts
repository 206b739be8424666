import { hasPermission } from '../../core/auth';
import { forbidden } from '../../core/errors';
import { route } from '../../core/route';
import { PIECES, READ_OP, type ReadPayload, type ReadResult } from '../contract';
import { retrieveBody } from '../requests';
import { retrieveAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/certificate/retrieve',
  permission: 'certificate:read',
  summary: 'The PEM text of the TLS pieces asked for (private_key needs certificate:manage)',
  body: retrieveBody,
  response: retrieveAnswer,
  examples: [{ summary: 'the served chain', body: { pieces: { server: true, intermediate: true, root: true } } }],
  async handler({ body, system, principal }) {
    const wanted = PIECES.filter((p) => body.pieces[p] === true);
    if (wanted.includes('private_key') && !hasPermission(principal.permissions, 'certificate:manage')) {
      throw forbidden('the private key needs the certificate:manage permission');
    }
    const out: { piece: (typeof PIECES)[number]; output: string }[] = [];
    for (const piece of wanted) {
      const r = await system.op<ReadResult>(READ_OP, { kind: 'piece', piece } satisfies ReadPayload);
      out.push({ piece, output: r.content ?? '' });
    }
    return out;
  },
});
