import { hasPermission } from '../../core/auth';
import { ApiError, forbidden } from '../../core/errors';
import { route } from '../../core/route';
import { path } from '../../core/vars';
import { PIECES, PIECE_PATH_KEY } from '../contract';
import { RetrieveBodySchema } from '../requests';
import { RetrieveResponse } from '../schemas';

export default route({
  method: 'POST',
  path: '/certificate/retrieve',
  permission: 'certificate:read',
  summary: 'The PEM text of the TLS pieces asked for (private_key needs certificate:manage)',
  body: RetrieveBodySchema,
  response: RetrieveResponse,
  examples: [{ summary: 'the served chain', body: { pieces: { server: true, intermediate: true, root: true } } }],
  async handler({ body, system, vars, principal }) {
    const wanted = PIECES.filter((p) => body.pieces[p] === true);
    if (wanted.includes('private_key') && !hasPermission(principal.permissions, 'certificate:manage')) {
      throw forbidden('the private key needs the certificate:manage permission');
    }
    const out: { piece: (typeof PIECES)[number]; output: string }[] = [];
    for (const piece of wanted) {
      const file = path(vars, PIECE_PATH_KEY[piece]);
      const st = await system.stat(file);
      if (st && st.type !== 'file') throw new ApiError('conflict', `the ${piece} file ${file} is not a regular file`);
      out.push({ piece, output: st ? ((await system.readFile(file)) ?? '') : '' });
    }
    return out;
  },
});
