import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { baseName, findRealmFile, realmConfFileName } from '../conf-files';
import { messageAnswer } from '../responses';
import { realmNameParams } from '../requests';

export default route({
  method: 'POST',
  path: '/kerberos/realm/:name/delete',
  permission: 'kerberos:manage',
  examples: [
    {
      summary: 'delete lab.conf',
      params: { name: 'lab' },
      then: [
        { method: 'GET', path: '/kerberos/realm/lab/details', status: 404, shows: { error: { code: 'not_found' } } },
      ],
    },
    { summary: 'an unknown realm file', params: { name: 'nosuch' }, status: 404 },
  ],
  summary: 'Delete a realm file (<name>.conf, or the listed file <name>); the answer names the deleted file',
  params: realmNameParams,
  response: messageAnswer,
  async handler({ params, system, vars, events }) {
    // The removed file is kept in the host's backups (restoreFile brings it back).
    const file = await findRealmFile(vars, params.name, async (p) => (await system.stat(p))?.type === 'file');
    const r = file === null ? { removed: false } : await system.removeFile(file, { backup: true });
    if (file === null || !r.removed) throw notFound(`realm file ${realmConfFileName(params.name)} not found`);
    await events.send({ kind: 'kerberos.realm.deleted', data: { name: params.name } });
    return { message: `Deleted realm file ${baseName(file)}` };
  },
});
