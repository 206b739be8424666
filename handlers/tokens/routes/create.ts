import { route } from '../../core/route';
import { TOKENS_CREATE_OP, type TokenCreateResult } from '../contract';
import { tokenCreateBody } from '../requests';
import { tokenCreateAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/tokens',
  permission: 'tokens:manage',
  summary: 'Create a token with permissions the calling token holds; its secret is in this answer only',
  body: tokenCreateBody,
  examples: [
    {
      summary: 'a read-only token for a metrics scraper, for 30 days',
      body: { name: 'prometheus', permissions: ['metrics:read'], expiresInDays: 30 },
      then: [{ method: 'GET', path: '/tokens', shows: [{ name: 'prometheus', permissions: ['metrics:read'] }] }],
    },
  ],
  response: tokenCreateAnswer,
  async handler({ body, principal, system, events }) {
    const made = await system.op<TokenCreateResult>(TOKENS_CREATE_OP, { ...body, by: principal.tokenId });
    await events.send({
      kind: 'tokens.token.created',
      data: { id: made.id, name: made.name, permissions: made.permissions, by: principal.tokenId },
    });
    return made;
  },
});
