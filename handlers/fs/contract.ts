/** What the fs routes and the host's fs area module (runtime/areas/fs.ts) share. */
export {
  EXPLORE_OP,
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  FLAG,
  MAX_EXPLORE_ERRORS,
  STAT_INDEX,
  collectExplore,
  flagsOfMode,
  exploreOpPayload,
  isExploreStream,
  fsSettingsSchema,
  type CompactEntry,
  type ExploreOpPayload,
  type ExploreOpResult,
  type ExploreRecord,
  type ExploreResult,
  type ExploreStream,
  type ExploreTrailer,
  type FsSettings,
  type TruncationReason,
} from './explore';
export { READ_TEXT_MAX_BYTES, READ_TEXT_OP, readTextPayload, type ReadTextResult } from './read-op';
