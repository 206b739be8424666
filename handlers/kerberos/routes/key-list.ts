import { route } from '../../core/route';
import { commandTimeout } from '../../core/system';
import { path } from '../../core/vars';
import { kerberosEnv, keytabListArgv } from '../commands';
import { krb5Failure } from '../failures';
import { parseKeytabList } from '../parse/klist';
import { keyListBody } from '../requests';
import { keyListAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/kerberos/key/list',
  permission: 'kerberos:read',
  examples: [{ summary: 'the keys of the default keytab', body: {} }],
  summary:
    'Keys of a keytab (klist -k -t -e): raw, and parsed (kvno, timestamp, principal, enctype); never key material',
  body: keyListBody,
  response: keyListAnswer,
  async handler({ body, system, vars }) {
    const argv = keytabListArgv(vars, body.path ?? path(vars, 'keytab'));
    const r = await system.exec(argv, { env: kerberosEnv(vars) });
    if (r.timedOut) throw commandTimeout(argv, r);
    // A missing keytab is a 404 and a file that is no keytab a 400, each with klist's reason.
    if (r.code !== 0) throw krb5Failure({ argv, code: r.code, stderr: r.stderr, stdout: r.stdout });
    return { raw: r.stdout, json: parseKeytabList(r.stdout) };
  },
});
