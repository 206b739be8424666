import { route } from '../../core/route';
import { READ_OP, type ReadResult } from '../contract';
import { parseAuthorizedKeys } from '../parse/authorized-keys';
import { userQuery } from '../requests';
import { authListAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/system/keys/auth',
  permission: 'keys:read',
  summary:
    "The entries of the API user's (or `user`'s) ~/.ssh/authorized_keys; a line sshd cannot use is listed with an `error`",
  query: userQuery,
  response: authListAnswer,
  examples: [
    { summary: "alice's three authorized keys (one with options)", query: { user: 'alice' } },
    { summary: "The API user's authorized keys" },
  ],
  async handler({ query, system }) {
    const r = await system.op<ReadResult>(READ_OP, { user: query.user, file: 'authorized_keys' });
    return r.content === null ? [] : parseAuthorizedKeys(r.content);
  },
});
