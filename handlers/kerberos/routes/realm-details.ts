import { route } from '../../core/route';
import { notFound } from '../../core/errors';
import { findRealmFile, realmFileEntry, realmConfFileName } from '../conf-files';
import { realmFile } from '../responses';
import { realmNameParams } from '../requests';

export default route({
  method: 'GET',
  path: '/kerberos/realm/:name/details',
  permission: 'kerberos:read',
  examples: [
    { summary: 'lab.conf', params: { name: 'lab' } },
    { summary: 'an unknown realm file', params: { name: 'nosuch' }, status: 404 },
  ],
  summary:
    'One realm file: <name>.conf, or the listed file <name> (a listing key, with or without .conf, addresses its file): raw and json',
  params: realmNameParams,
  response: realmFile,
  async handler({ params, system, vars }) {
    const file = await findRealmFile(vars, params.name, async (p) => (await system.stat(p))?.type === 'file');
    const raw = file === null ? null : await system.readFile(file);
    if (raw === null) throw notFound(`realm file ${realmConfFileName(params.name)} not found`);
    return realmFileEntry(raw);
  },
});
