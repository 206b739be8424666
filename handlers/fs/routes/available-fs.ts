import { route } from '../../core/route';
import { path } from '../../core/vars';
import { availableFilesystems } from '../available-fs';
import { availableFsAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/fs/available_fs',
  permission: 'fs:read',
  examples: [{ summary: 'the demo disks' }],
  summary: 'Filesystem types this box can create (from the mkfs.* helpers present)',
  response: availableFsAnswer,
  async handler({ system, vars }) {
    // Both directories: on a merged-/usr box they are one, on an older one either may hold helpers.
    const lists = await Promise.all([path(vars, 'sbin'), path(vars, 'sbinLegacy')].map((d) => system.listDir(d)));
    const names = lists.flatMap((entries) => (entries ?? []).filter((e) => e.type !== 'dir').map((e) => e.name));
    return availableFilesystems(names);
  },
});
