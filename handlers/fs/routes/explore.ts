import { JsonText, route } from '../../core/route';
import { EXPLORE_OP, isExploreStream, type ExploreOpResult, type ExploreStream } from '../explore';
import { exploreJsonChunks, exploreJsonStream } from '../explore-json';
import { exploreBody } from '../requests';
import { exploreAnswer } from '../responses';

/**
 * The walk itself is a host operation (route code cannot stat): it lstat's in bounded batches,
 * never follows symlinks, stays on one filesystem unless asked, and stops at `depth` and
 * `maxEntries`; see handlers/fs/explore.ts for the limits and their defaults.
 */
export default route({
  method: 'POST',
  path: '/fs/explore',
  permission: 'fs:read',
  long: { budgetS: 300, phases: ['walk'] },
  examples: [
    { summary: 'the data filesystem, two levels deep', body: { fs_path: '/srv/data', depth: 2 } },
    { summary: 'outside the configured read roots', body: { fs_path: '/etc' }, status: 403 },
  ],
  summary: 'The entries below fs_path (stat fields, recursive children, file_num), bounded by depth and an entry cap',
  body: exploreBody,
  response: exploreAnswer,
  async handler({ body, system }) {
    const compact = await system.op<ExploreOpResult | ExploreStream>(EXPLORE_OP, {
      path: body.fs_path,
      depth: body.depth,
      maxEntries: body.maxEntries,
      oneFileSystem: body.oneFileSystem,
    });
    // the host answers compactly (a tree, or in this process a stream while it walks); the
    // spec's JSON is written from it directly, in pieces while the socket takes them
    // (explore-json.ts: the same bytes as serialising expandExplore's objects, without building
    // or checking them). Every refusal happened before the answer above.
    return new JsonText(isExploreStream(compact) ? exploreJsonStream(compact) : exploreJsonChunks(compact));
  },
});
