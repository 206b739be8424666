import { notFound } from '../../core/errors';
import { route } from '../../core/route';
import { READ_OP, type ReadResult } from '../contract';
import { parsePublicKeyFile } from '../parse/authorized-keys';
import { userQuery } from '../requests';
import { pubAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/system/keys/pub',
  permission: 'keys:read',
  summary: 'The public key of the API user (or of `user`): the line of ~/.ssh/id_ed25519.pub',
  query: userQuery,
  response: pubAnswer,
  examples: [
    { summary: "The API user's public key" },
    { summary: 'A user with no key pair', query: { user: 'alice' }, status: 404 },
  ],
  async handler({ query, system }) {
    const r = await system.op<ReadResult>(READ_OP, { user: query.user, file: 'public_key' });
    if (r.content === null) throw notFound(`user ${r.user} has no public key (${r.path})`);
    // a file that is not one key line is the system's fault, not the caller's: 502 naming the file
    const key = parsePublicKeyFile(r.content);
    return { public_key: key.line.replace(/[ \t]+$/, '') };
  },
});
