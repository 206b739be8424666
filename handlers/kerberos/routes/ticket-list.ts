import { route } from '../../core/route';
import { commandTimeout } from '../../core/system';
import { kerberosEnv, klistArgv } from '../commands';
import { krb5Failure } from '../failures';
import { parseKlist } from '../parse/klist';
import { ticketListAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/kerberos/ticket/list',
  permission: 'kerberos:read',
  examples: [{ summary: "administrator's TGT and an LDAP service ticket" }],
  summary: "The product's ticket cache: klist output as raw, and parsed (cache, default principal, tickets)",
  response: ticketListAnswer,
  async handler({ system, vars }) {
    const argv = klistArgv(vars);
    const r = await system.exec(argv, { env: kerberosEnv(vars) });
    if (r.timedOut) throw commandTimeout(argv, r);
    // No cache (nothing obtained yet, or destroyed) is klist's "No credentials cache found": 404.
    if (r.code !== 0) throw krb5Failure({ argv, code: r.code, stderr: r.stderr, stdout: r.stdout });
    return { raw: r.stdout, json: parseKlist(r.stdout) };
  },
});
