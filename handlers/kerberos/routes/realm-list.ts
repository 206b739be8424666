import { route } from '../../core/route';
import { isIncludedFileName, realmDir, realmFileEntry } from '../conf-files';
import { realmListAnswer, type RealmFile } from '../responses';

export default route({
  method: 'GET',
  path: '/kerberos/realm',
  permission: 'kerberos:read',
  examples: [{ summary: 'the demo realm file lab.conf' }],
  summary: 'The realm files of the include directory, keyed by file name, each with raw and json',
  response: realmListAnswer,
  async handler({ system, vars }) {
    const dir = realmDir(vars);
    const entries = await system.listDir(dir);
    // No directory yet: no realm files (the first create makes it).
    if (entries === null) return {};
    const out: [string, RealmFile][] = [];
    // Every regular file MIT's includedir reads, in its (sorted) order, including files that
    // were not written through this API and names without `.conf`: this is what MIT sees.
    for (const e of entries) {
      if (e.type !== 'file' || !isIncludedFileName(e.name)) continue;
      const raw = await system.readFile(`${dir}/${e.name}`);
      if (raw !== null) out.push([e.name, realmFileEntry(raw)]);
    }
    return Object.fromEntries(out);
  },
});
