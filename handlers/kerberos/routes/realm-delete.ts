import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { realmFilePath } from '../conf-files';
import { MessageSchema, RealmNameParamsSchema } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/realm/:name/delete',
  permission: 'kerberos:manage',
  examples: [{"summary": "delete lab.conf", "params": {"name": "lab"}}, {"summary": "an unknown realm file", "params": {"name": "nosuch"}, "status": 404}],
  summary: 'Delete a realm file (<name>.conf); the answer names the deleted file',
  params: RealmNameParamsSchema,
  response: MessageSchema,
  async handler({ params, system, vars, events }) {
    // The removed file is kept in the host's backups (restoreFile brings it back).
    const r = await system.removeFile(realmFilePath(vars, params.name), { backup: true });
    if (!r.removed) throw notFound(`realm file ${params.name}.conf not found`);
    await events.send({ kind: 'kerberos.realm.deleted', data: { name: params.name } });
    return { message: `Deleted realm file ${params.name}.conf` };
  },
});
