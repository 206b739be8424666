import { route } from '../../core/route';
import { commandTimeout } from '../../core/system';
import { kerberosEnv, kdestroyArgv } from '../commands';
import { krb5Failure } from '../failures';
import { parseKrb5Error } from '../parse/krb5-error';
import { messageAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/kerberos/ticket/destroy',
  permission: 'kerberos:manage',
  examples: [{ summary: "destroy the API user's tickets", body: {} }],
  summary: "Destroy the product's ticket cache (kdestroy)",
  response: messageAnswer,
  async handler({ system, vars, events }) {
    const argv = kdestroyArgv(vars);
    const r = await system.exec(argv, { env: kerberosEnv(vars) });
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw krb5Failure({ argv, code: r.code, stderr: r.stderr, stdout: r.stdout });
    // MIT kdestroy exits 0 when there is no cache, saying so on stderr: destroying is idempotent,
    // and only a cache that existed makes an event.
    if (parseKrb5Error(r.stderr)?.kind === 'no-credentials-cache') return { message: 'No Kerberos tickets to destroy' };
    await events.send({ kind: 'kerberos.ticket.destroyed', data: {} });
    return { message: 'Kerberos tickets destroyed' };
  },
});
