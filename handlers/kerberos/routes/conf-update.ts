import { route } from '../../core/route';
import { emptyObject } from '../../core/schemas';
import { path } from '../../core/vars';
import { ENSURE_CONF_DIR_OP } from '../contract';
import { checkIncludesExist, globalConfText } from '../conf-files';
import { confUpdateBody } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/conf/update',
  permission: 'kerberos:manage',
  examples: [
    {
      summary: 'write the demo krb5.conf back unchanged',
      body: {
        conf: 'includedir /etc/krb5.conf.d\n\n[libdefaults]\n\tdefault_realm = CORP.EXAMPLE.COM\n\tdns_lookup_realm = false\n\tdns_lookup_kdc = true\n\tticket_lifetime = 24h\n\trenew_lifetime = 7d\n\tforwardable = true\n\trdns = false\n\n[realms]\n\tCORP.EXAMPLE.COM = {\n\t\tkdc = dc01.corp.example.com\n\t\tkdc = dc02.corp.example.com\n\t\tadmin_server = dc01.corp.example.com\n\t\tdefault_domain = corp.example.com\n\t}\n\n[domain_realm]\n\t.corp.example.com = CORP.EXAMPLE.COM\n\tcorp.example.com = CORP.EXAMPLE.COM\n',
      },
    },
  ],
  summary:
    'Replace the global krb5.conf with the full raw text given (first line: includedir /etc/krb5.conf.d, stored naming the configured include directory, which is created if missing)',
  body: confUpdateBody,
  response: emptyObject,
  async handler({ body, system, vars, events }) {
    // Refused before anything is written: a wrong first line drops every realm file, and a file
    // MIT cannot read stops every Kerberos program on the box.
    const { text, parsed } = globalConfText(body.conf, vars);
    await checkIncludesExist(parsed, text, vars, async (p) => (await system.stat(p)) !== null);
    // The include directory the first line names must exist, or every Kerberos program fails
    // ("Included profile directory could not be read"): made before the file names it.
    await system.op(ENSURE_CONF_DIR_OP, {});
    // Atomic replace; the previous file is kept in the host's backups for a rollback.
    await system.writeFile(path(vars, 'krb5Conf'), text, { backup: true });
    await events.send({ kind: 'kerberos.conf.updated', data: {} });
    return {};
  },
});
