import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { realmFileEntry, realmFilePath } from '../conf-files';
import { RealmFileSchema, RealmNameParamsSchema } from '../requests';

export default route({
  method: 'GET',
  path: '/kerberos/realm/:name/details',
  permission: 'kerberos:read',
  examples: [{"summary": "lab.conf", "params": {"name": "lab"}}, {"summary": "an unknown realm file", "params": {"name": "nosuch"}, "status": 404}],
  summary: 'One realm file (<name>.conf, name without extension): raw and json',
  params: RealmNameParamsSchema,
  response: RealmFileSchema,
  async handler({ params, system, vars }) {
    const raw = await system.readFile(realmFilePath(vars, params.name));
    if (raw === null) throw notFound(`realm file ${params.name}.conf not found`);
    return realmFileEntry(raw);
  },
});
