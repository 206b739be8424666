import { route } from '../../core/route';
import { EXPLORE_OP, exploreBody, exploreResultSchema, type ExploreResult } from '../explore';

/**
 * The walk itself is a host operation (route code cannot stat): it lstat's in bounded batches,
 * never follows symlinks, stays on one filesystem unless asked, and stops at `depth` and
 * `maxEntries`; see handlers/fs/explore.ts for the limits and their defaults.
 */
export default route({
  method: 'POST',
  path: '/fs/explore',
  permission: 'fs:read',
  summary: 'The entries below fs_path (stat fields, recursive children, file_num), bounded by depth and an entry cap',
  body: exploreBody,
  response: exploreResultSchema,
  async handler({ body, system }) {
    return system.op<ExploreResult>(EXPLORE_OP, {
      path: body.fs_path,
      depth: body.depth,
      maxEntries: body.maxEntries,
      oneFileSystem: body.oneFileSystem,
    });
  },
});
