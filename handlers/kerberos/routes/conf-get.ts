import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { path } from '../../core/vars';
import { parseKrb5Conf } from '../parse/krb5-conf';
import { confAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/kerberos/conf',
  permission: 'kerberos:read',
  examples: [{ summary: 'the demo krb5.conf (realm CORP.EXAMPLE.COM)' }],
  summary: 'The global krb5.conf, as raw text and parsed',
  response: confAnswer,
  async handler({ system, vars }) {
    const file = path(vars, 'krb5Conf');
    const raw = await system.readFile(file);
    if (raw === null) throw notFound(`krb5.conf not found at ${file}`);
    return { raw, json: parseKrb5Conf(raw) };
  },
});
