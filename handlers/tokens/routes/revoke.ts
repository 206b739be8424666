import { route } from '../../core/route';
import { TOKENS_REVOKE_OP } from '../contract';
import { tokenRevokeParams } from '../requests';
import { tokenRevokeAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/tokens/:id/revoke',
  permission: 'tokens:manage',
  summary: 'Revoke a token (by id or name) whose permissions the calling token holds; it fails at its next request',
  params: tokenRevokeParams,
  examples: [
    {
      summary: 'revoke a token made for a CI runner',
      params: { id: 'ci-runner' },
      before: [{ method: 'POST', path: '/tokens', body: { name: 'ci-runner', permissions: ['fs:read'] } }],
      then: [{ method: 'GET', path: '/tokens', shows: [{ name: 'ci-runner', state: 'revoked' }] }],
    },
  ],
  response: tokenRevokeAnswer,
  async handler({ params, principal, system, events }) {
    const r = await system.op<{ id: string; name: string; revokedAt: string }>(TOKENS_REVOKE_OP, {
      idOrName: params.id,
      by: principal.tokenId,
    });
    await events.send({ kind: 'tokens.token.revoked', data: { id: r.id, name: r.name, by: principal.tokenId } });
    return r;
  },
});
