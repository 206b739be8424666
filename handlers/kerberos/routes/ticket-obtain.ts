import { route } from '../../core/route';
import { ApiError } from '../../core/errors';
import { path, type Vars } from '../../core/vars';
import type { SystemClient } from '../../core/system';
import {
  kerberosEnv,
  kinitKeytabArgv,
  kinitPasswordArgv,
  kinitTimeoutMs,
  klistArgv,
  passwordDialogue,
} from '../commands';
import { defaultRealm } from '../conf-files';
import { krb5Failure, krb5Timeout, normaliseTty, scrub } from '../failures';
import { realmName, realmCaseHint } from '../names';
import { parseKlist } from '../parse/klist';
import { messageAnswer } from '../responses';
import { obtainBody } from '../requests';

/** body.realm, else default_realm of krb5.conf: kinit is always given a full principal. */
async function realmFor(given: string | undefined, system: SystemClient, vars: Vars): Promise<string> {
  if (given !== undefined) return given;
  const found = await defaultRealm((f) => system.readFile(f), vars);
  if (found === undefined) {
    throw new ApiError('conflict', `no realm given, and ${path(vars, 'krb5Conf')} sets no default_realm`);
  }
  // It reaches argv, so the configured value is held to the same rule as a client's.
  if (!realmName.safeParse(found).success) {
    throw new ApiError('conflict', 'default_realm in krb5.conf is not a usable realm name; give realm');
  }
  return found;
}

const realmOf = (principal: string) => principal.slice(principal.lastIndexOf('@') + 1);

export default route({
  method: 'POST',
  path: '/kerberos/ticket/obtain',
  permission: 'kerberos:manage',
  examples: [
    {
      summary: 'administrator with a password (replay does not check it)',
      body: { username: 'administrator', password: 'any demo password' },
    },
    { summary: 'the host principal from the keytab', body: { principal: 'host/nas01.corp.example.com' } },
    { summary: 'an unknown user', body: { username: 'nobody', password: 'x' }, status: 400 },
  ],
  summary: 'Obtain a ticket-granting ticket with a domain admin password (kinit at a pty prompt) or from a keytab',
  body: obtainBody,
  response: messageAnswer,
  async handler({ body, system, vars, events }) {
    const env = kerberosEnv(vars);
    const timeoutMs = kinitTimeoutMs(vars);
    let principal: string;

    if (body.username !== undefined && body.password !== undefined) {
      principal = `${body.username}@${await realmFor(body.realm, system, vars)}`;
      const argv = kinitPasswordArgv(vars, principal);
      const r = await system.pty(argv, passwordDialogue(body.password), { env, timeoutMs });
      if (r.timedOut) throw krb5Timeout(argv, timeoutMs);
      if (r.code !== 0) {
        const output = normaliseTty(scrub(r.output, body.password));
        throw krb5Failure({
          argv,
          code: r.code,
          stderr: output,
          stdout: output,
          principal,
          hint: realmCaseHint(realmOf(principal)),
        });
      }
    } else {
      const keytab = body.path ?? path(vars, 'keytab');
      let wanted = body.principal;
      if (wanted !== undefined && !wanted.includes('@'))
        wanted = `${wanted}@${await realmFor(body.realm, system, vars)}`;
      const argv = kinitKeytabArgv(vars, keytab, wanted);
      const r = await system.exec(argv, { env, timeoutMs });
      if (r.timedOut) throw krb5Timeout(argv, timeoutMs);
      if (r.code !== 0)
        throw krb5Failure({
          argv,
          code: r.code,
          stderr: r.stderr,
          stdout: r.stdout,
          principal: wanted,
          hint: wanted === undefined ? '' : realmCaseHint(realmOf(wanted)),
        });
      // Without a principal kinit chose one (host/<fqdn>@<realm of the host>): ask the cache
      // which, so the answer names the realm for real.
      principal = wanted ?? parseKlist((await system.run(klistArgv(vars), { env })).stdout).defaultPrincipal;
    }

    const realm = realmOf(principal);
    await events.send({ kind: 'kerberos.ticket.obtained', data: { realm, principal } });
    return { message: `Kerberos ticket obtained for ${principal} in realm ${realm}` };
  },
});
