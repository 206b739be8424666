import { conflict, validationFailed } from '../../core/errors';
import { route } from '../../core/route';
import { AUTH_LOCK, editAuthorizedKeys } from '../authorized-edit';
import { appendLine, KeyLineError, parseAuthorizedKeys, parseKeyLine, type KeyLine } from '../parse/authorized-keys';
import { authAddBody } from '../requests';
import { authAddAnswer } from '../responses';

/** sshd's RequiredRSASize default (OpenSSH 9.1+): smaller RSA keys are refused at login. */
const MIN_RSA_BITS = 1024;
/** OpenSSH's SSHBUF/RSA limit (SSH_RSA_MAXIMUM_MODULUS_SIZE). */
const MAX_RSA_BITS = 16384;

function validKeyLine(text: string): KeyLine {
  const line = text.replace(/^[ \t]+|[ \t]+$/g, '');
  if (line.startsWith('#')) throw validationFailed('body.key', 'is a comment line, not a key');
  let k: KeyLine;
  try {
    k = parseKeyLine(line);
  } catch (e) {
    if (e instanceof KeyLineError) throw validationFailed('body.key', e.message);
    throw e;
  }
  if (k.algo.startsWith('ssh-dss'))
    throw validationFailed('body.key', 'ssh-dss (DSA) keys are disabled by OpenSSH (removed in OpenSSH 10)');
  if (k.algo.includes('rsa') && k.bits < MIN_RSA_BITS)
    throw validationFailed('body.key', `RSA keys need at least ${MIN_RSA_BITS} bits (this one has ${k.bits})`);
  if (k.algo.includes('rsa') && k.bits > MAX_RSA_BITS)
    throw validationFailed('body.key', `RSA keys have at most ${MAX_RSA_BITS} bits (this one has ${k.bits})`);
  return k;
}

export default route({
  method: 'POST',
  path: '/system/keys/auth/add',
  permission: 'keys:manage',
  summary:
    "Append a key line to the API user's (or `user`'s) ~/.ssh/authorized_keys; a key already there (same fingerprint) is a 409",
  body: authAddBody,
  response: authAddAnswer,
  lock: AUTH_LOCK,
  examples: [
    {
      summary: 'Authorize a backup host for alice, restricted to one command from one network',
      body: {
        user: 'alice',
        key: 'from="10.0.8.0/24",command="/usr/local/bin/backup-receive",restrict ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK1VARsg9gxZaq6VedNAqHTI4N2EARHphOP5q9n6zqpH backup@vault01',
      },
      then: [
        {
          method: 'GET',
          path: '/system/keys/auth?user=alice',
          shows: [{ algo: 'ssh-ed25519', comment: 'backup@vault01' }],
        },
      ],
    },
  ],
  async handler({ body, system, events }) {
    const key = validKeyLine(body.key);
    const { user } = await editAuthorizedKeys(system, body.user, (current) => {
      const dup = parseAuthorizedKeys(current.content ?? '').find((e) => e.fingerprint === key.fingerprint);
      if (dup)
        throw conflict(`the key ${key.fingerprint} is already authorized for ${current.user} (entry ${dup.index})`, {
          index: dup.index,
        });
      return { content: appendLine(current.content, key.line), result: undefined };
    });
    await events.send({
      kind: 'keys.authorized.added',
      data: { user, fingerprint: key.fingerprint, comment: key.comment },
    });
    return { algo: key.algo, blob: key.blob, comment: key.comment, fingerprint: key.fingerprint, line: key.line };
  },
});
