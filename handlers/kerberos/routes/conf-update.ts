import { route } from '../../core/route';
import { emptyObject } from '../../core/schemas';
import { path } from '../../core/vars';
import { checkGlobalConf, checkIncludesExist } from '../conf-files';
import { ConfUpdateBodySchema } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/conf/update',
  permission: 'kerberos:manage',
  summary: 'Replace the global krb5.conf with the full raw text given (first line: includedir /etc/krb5.conf.d)',
  body: ConfUpdateBodySchema,
  response: emptyObject,
  async handler({ body, system, vars, events }) {
    // Refused before anything is written: a wrong first line drops every realm file, and a file
    // MIT cannot read stops every Kerberos program on the box.
    const parsed = checkGlobalConf(body.conf, vars);
    await checkIncludesExist(parsed, body.conf, vars, async (p) => (await system.stat(p)) !== null);
    // Atomic replace; the previous file is kept in the host's backups for a rollback.
    await system.writeFile(path(vars, 'krb5Conf'), body.conf, { backup: true });
    await events.send({ kind: 'kerberos.conf.updated', data: {} });
    return {};
  },
});
