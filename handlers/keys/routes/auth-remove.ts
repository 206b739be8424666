import { notFound, validationFailed } from '../../core/errors';
import { route } from '../../core/route';
import { AUTH_LOCK, editAuthorizedKeys } from '../authorized-edit';
import { normalizeFingerprint, removeByFingerprint } from '../parse/authorized-keys';
import { authRemoveBody } from '../requests';
import { authRemoveAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/system/keys/auth/remove',
  permission: 'keys:manage',
  summary:
    "Remove the key(s) with this MD5 fingerprint from the API user's (or `user`'s) ~/.ssh/authorized_keys; every other line stays byte for byte",
  body: authRemoveBody,
  response: authRemoveAnswer,
  lock: AUTH_LOCK,
  examples: [
    {
      summary: "Remove alice's old laptop key",
      body: { user: 'alice', fingerprint: 'MD5:20:fd:2d:69:a8:fb:18:22:8e:98:ac:b8:d2:37:74:55' },
    },
  ],
  async handler({ body, system, events }) {
    const fingerprint = normalizeFingerprint(body.fingerprint);
    if (!fingerprint)
      throw validationFailed(
        'body.fingerprint',
        'must be an MD5 fingerprint: 16 colon-separated hex pairs, optionally prefixed MD5:',
      );
    const { user } = await editAuthorizedKeys(system, body.user, (current) => {
      const r =
        current.content === null ? { text: '', removed: [] } : removeByFingerprint(current.content, fingerprint);
      if (r.removed.length === 0) throw notFound(`no key with fingerprint ${fingerprint} in ${current.path}`);
      return { content: r.text, result: r.removed.length };
    });
    await events.send({ kind: 'keys.authorized.removed', data: { user, fingerprint } });
    return { fingerprint };
  },
});
