import { route } from '../../core/route';
import { TOKENS_LIST_OP, type TokenInfo } from '../contract';
import { tokenListAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/tokens',
  permission: 'tokens:read',
  summary: 'Every API token: name, permissions, dates, state (never a secret)',
  examples: [{ summary: "the demo's tokens" }],
  response: tokenListAnswer,
  async handler({ system }) {
    const now = Date.now();
    return (await system.op<TokenInfo[]>(TOKENS_LIST_OP, {})).map((t) => ({
      ...t,
      state:
        t.revokedAt !== null
          ? ('revoked' as const)
          : t.expiresAt !== null && Date.parse(t.expiresAt) <= now
            ? ('expired' as const)
            : ('live' as const),
    }));
  },
});
