import { route } from '../../core/route';
import { ApiError, conflict } from '../../core/errors';
import { emptyObject } from '../../core/schemas';
import {
  checkIncludesExist,
  realmFileCandidates,
  realmConfFileName,
  realmFilePath,
  realmFileText,
} from '../conf-files';
import { realmCreateBody } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/realm/create',
  permission: 'kerberos:manage',
  examples: [
    {
      summary: 'a realm file for TEST.EXAMPLE.COM',
      body: { name: 'test', conf: '[realms]\n\tTEST.EXAMPLE.COM = {\n\t\tkdc = kdc.test.example.com:88\n\t}\n' },
      then: [
        {
          method: 'GET',
          path: '/kerberos/realm',
          shows: {
            'test.conf': {
              json: { sections: { realms: { 'TEST.EXAMPLE.COM': { kdc: ['kdc.test.example.com:88'] } } } },
            },
          },
        },
      ],
    },
    {
      summary: 'lab exists already',
      body: {
        name: 'lab',
        conf: '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = kdc.lab.example.com:88\n\t\tadmin_server = kdc.lab.example.com\n\t}\n\n[domain_realm]\n\t.lab.example.com = LAB.EXAMPLE.COM\n',
      },
      status: 409,
    },
  ],
  summary:
    'Create <name>.conf (or <name> when it ends in .conf; the realm itself, e.g. CORP.EXAMPLE.COM, is a good name) in the include directory from raw text or an object (rendered to krb5.conf syntax)',
  body: realmCreateBody,
  response: emptyObject,
  async handler({ body, system, vars, events }) {
    const { text, parsed } = realmFileText(body.conf, vars, body.name);
    await checkIncludesExist(parsed, text, vars, async (p) => (await system.stat(p)) !== null);
    // a listed file without extension (`lab`) would be read next to `lab.conf`: one name, one file
    for (const p of realmFileCandidates(vars, body.name)) {
      if ((await system.stat(p)) !== null)
        throw conflict(`realm file ${p.slice(p.lastIndexOf('/') + 1)} already exists`);
    }
    try {
      // exclusive: the host refuses to replace an existing file (a realm someone else wrote).
      await system.writeFile(realmFilePath(vars, body.name), text, { exclusive: true });
    } catch (e) {
      if (e instanceof ApiError && e.status === 409)
        throw conflict(`realm file ${realmConfFileName(body.name)} already exists`);
      throw e;
    }
    await events.send({ kind: 'kerberos.realm.created', data: { name: body.name } });
    return {};
  },
});
