import { route } from '../../core/route';
import { commandFailed, commandTimeout } from '../../core/system';
import { GENERATE_OP, type GenerateResult } from '../contract';
import { userQuery } from '../requests';
import { pubGenerateAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/system/keys/pub/generate',
  permission: 'keys:manage',
  summary:
    'Replace the key pair of the API user (or of `user`) with a new ed25519 pair (ssh-keygen, as that user). Systems that trusted the old public key lose access.',
  // a GET that writes a key: HEAD is refused rather than generating a second time
  sideEffects: true,
  query: userQuery,
  response: pubGenerateAnswer,
  examples: [
    { summary: 'A new key pair for the API user' },
    { summary: 'A new key pair for alice', query: { user: 'alice' } },
  ],
  async handler({ query, system, events }) {
    const r = await system.op<GenerateResult>(GENERATE_OP, { user: query.user });
    if (r.result.timedOut) throw commandTimeout(r.argv, r.result);
    if (r.result.code !== 0) throw commandFailed(r.argv, r.result);
    await events.send({ kind: 'keys.public.regenerated', data: { user: r.user } });
    return {};
  },
});
