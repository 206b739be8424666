import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { emptyObject } from '../../core/schemas';
import { checkIncludesExist, findRealmFile, realmConfFileName, realmFileText } from '../conf-files';
import { realmNameParams, realmUpdateBody } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/realm/:name/update',
  permission: 'kerberos:manage',
  examples: [
    {
      summary: 'rewrite lab.conf',
      params: { name: 'lab' },
      body: {
        conf: '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = kdc.lab.example.com:88\n\t\tadmin_server = kdc.lab.example.com\n\t}\n\n[domain_realm]\n\t.lab.example.com = LAB.EXAMPLE.COM\n',
      },
    },
  ],
  summary: 'Replace an existing realm file with raw text or an object (rendered to krb5.conf syntax)',
  params: realmNameParams,
  body: realmUpdateBody,
  response: emptyObject,
  async handler({ params, body, system, vars, events }) {
    const { text, parsed } = realmFileText(body.conf, vars, params.name);
    await checkIncludesExist(parsed, text, vars, async (p) => (await system.stat(p)) !== null);
    // Update never creates: a typo in the name must not add a realm file next to the real one.
    const file = await findRealmFile(vars, params.name, async (p) => (await system.stat(p))?.type === 'file');
    if (file === null) throw notFound(`realm file ${realmConfFileName(params.name)} not found`);
    await system.writeFile(file, text, { backup: true });
    await events.send({ kind: 'kerberos.realm.updated', data: { name: params.name } });
    return {};
  },
});
