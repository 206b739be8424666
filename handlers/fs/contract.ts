/**
 * What the fs routes and the host's fs area module (runtime/areas/fs.ts) share: the settings
 * (`settings.fs`, checked by the host at start, read by the routes with areaSettings), and the
 * host operations' names, payloads and results (explore: explore.ts; reading a checksum file:
 * read-op.ts).
 */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { EXPLORE_ABSOLUTE_MAX_ENTRIES, EXPLORE_ENTRY_CEILING } from './explore';

export {
  EXPLORE_OP,
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  FLAG,
  MAX_EXPLORE_ERRORS,
  STAT_INDEX,
  STAT_STRIDE,
  collectExplore,
  flagsOfMode,
  exploreOpPayload,
  isExploreStream,
  type CompactEntry,
  type ExploreOpPayload,
  type ExploreOpResult,
  type ExploreRecords,
  type ExploreStream,
  type ExploreTrailer,
} from './explore';
export { READ_TEXT_MAX_BYTES, READ_TEXT_OP, readTextPayload, type ReadTextResult } from './read-op';
export type { ExploreAnswer, TruncationReason } from './responses';

/** Where data filesystems live on an appliance: the default of every fs root list. */
export const DEFAULT_DATA_ROOTS = ['/mnt', '/srv', '/media', '/data'];

/**
 * `settings.fs` of the host config (all optional). Every path an fs route touches is resolved by
 * the host (symlinks followed) and must lie under the roots of its use (allow-lists):
 *   mountRoots         mountpoints of mount/unmount, strictly below one of these
 *   writeRoots         directories make_directory creates and set_permissions changes (default: mountRoots)
 *   readRoots          what explore walks, xxhash hashes and xxhash_verify reads and checks (default: mountRoots)
 *   exploreMaxEntries  the largest maxEntries a request may ask for
 */
export const fsSettings = z
  .strictObject({
    mountRoots: z.array(absolutePath).min(1).default(DEFAULT_DATA_ROOTS),
    writeRoots: z.array(absolutePath).min(1).optional(),
    readRoots: z.array(absolutePath).min(1).optional(),
    exploreMaxEntries: z.number().int().min(1).max(EXPLORE_ABSOLUTE_MAX_ENTRIES).default(EXPLORE_ENTRY_CEILING),
    /**
     * Where explore and the checksum-file reader see `/` from (`/` on a real box; the demo's root
     * in the demo, so `/srv/data` there is var/demo/root/srv/data). Commands are not affected.
     */
    pathRoot: absolutePath.default('/'),
  })
  .transform((s) => ({ ...s, writeRoots: s.writeRoots ?? s.mountRoots, readRoots: s.readRoots ?? s.mountRoots }));
export type FsSettings = z.infer<typeof fsSettings>;
