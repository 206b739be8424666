/**
 * Host side of POST /fs/explore: a read-only, bounded walk of a directory tree.
 *
 * Two walks give the same answer:
 * - streamed, depth-first (explore-dfs.ts), whenever the entry cap will not cut the tree: the
 *   route writes the JSON while the walk goes on, and the host holds the open directories, not
 *   the tree. Whether the cap cuts is decided first by counting names breadth-first (readdir,
 *   and lstat of the directories only), the rule the cap keeps entries by;
 * - breadth-first (explore-bfs.ts), when the cap cuts: which entries it keeps (the shallowest) is
 *   part of the answer, so the whole compact tree is built first, O(entries returned) (~31 MB
 *   live for 100 000 entries), and the route serialises it after (explore-json.ts).
 *
 * How both stay cheap on a large tree:
 * - every entry is lstat'ed exactly once. On a local filesystem (LOCAL_FS_TYPES, by statfs
 *   once per device) worker threads (explore-pool.ts) make the calls: the streamed walk's read
 *   and lstat whole directories, the breadth-first walk's lstat batches of names while it reads
 *   the directories itself (SYNC_READ_BATCH names between event-loop turns); one libuv round
 *   trip per entry cost 4-6x the lstat. On any other filesystem (NFS, CIFS, FUSE,
 *   unknown) through LSTAT_CONCURRENCY calls on libuv's pool, with the callback API (a promise
 *   chain per entry costs more than the stat), so a slow or hung network filesystem holds up
 *   this walk, never the host's event loop;
 * - entries are in the compact form of handlers/fs/explore.ts (a tuple each; the route builds
 *   the spec's objects), a quarter of the bytes through the SYSTEM binding;
 * - the walk stops taking names at `maxEntries` and does not enter directories deeper than
 *   `depth`, or (by default) on another filesystem;
 * - one walk at a time (EXPLORE_CONCURRENCY, held until a streamed answer ends); a few more
 *   wait in a queue, then 503 busy.
 *
 * Safety: lstat only, so a symbolic link is an entry and never a way out of the tree; only
 * the requested path itself is resolved (like `find -H`), and its real path must lie inside one
 * of the configured read roots, and neither be nor hold a path another area or the host manages
 * (a walk of `/srv` would list the pods' files). Nothing is opened for writing, nothing is changed.
 *
 * Order: each directory's children are sorted by name (JS string order), so answers are
 * stable. Which names of a directory are kept when the cap cuts it is readdir's order.
 */
import {
  collectExplore,
  EXPLORE_DEFAULT_DEPTH,
  EXPLORE_DEFAULT_ENTRIES,
  type ExploreOpPayload,
  type ExploreOpResult,
  type ExploreStream,
} from '../../../handlers/fs/contract';
import { Semaphore } from '../../system/semaphore';
import { SystemRefusal } from '../../system/types';
import { walkBreadthFirst } from './explore-bfs';
import { LocalDevices, LOCAL_FS_TYPES, openRoot, type ExploreLimits } from './explore-common';
import { capWouldCut } from './explore-count';
import { exploreStream } from './explore-dfs';
import { ExplorePool } from './explore-pool';

export { LOCAL_FS_TYPES } from './explore-common';

/**
 * Whole walks at once, and how many may wait (then 503 busy). One: a breadth-first walk holds
 * its whole compact tree, so walks queue rather than stack.
 */
const EXPLORE_CONCURRENCY = 1;
const EXPLORE_QUEUE = 4;

export interface ExploreOptions {
  /** real paths (already resolved) that requests may explore below */
  roots: readonly string[];
  /** the largest maxEntries a request may ask for */
  maxEntriesCeiling: number;
  /** statfs types read synchronously (default LOCAL_FS_TYPES; tests pass an empty set for the async path) */
  localFsTypes?: ReadonlySet<number>;
  /** the worker pool for local filesystems (default: one shared by all walks; tests pass their own) */
  pool?: ExplorePool;
  /** false: always the breadth-first walk (tests compare the two) */
  stream?: boolean;
  /** the path as the answer shows it, from the real one asked for (the demo's pathRoot) */
  showAs?: (path: string) => string;
  /** refuses a walk of a tree that is, or holds, another area's path (runtime/system/owners.ts) */
  checkOwner?: (real: string) => void;
}

const walks = new Semaphore(EXPLORE_CONCURRENCY, EXPLORE_QUEUE);
/** shared by the walks (one at a time); its threads start at the first walk and stop when idle */
const explorePool = new ExplorePool();

/**
 * The walk's answer: a stream while it walks (when the cap will not cut and `stream` is not
 * false), else the whole compact tree. Every refusal (404, 403, 400, 503) comes before either.
 */
export async function exploreWalk(req: ExploreOpPayload, o: ExploreOptions): Promise<ExploreOpResult | ExploreStream> {
  const depth = req.depth ?? EXPLORE_DEFAULT_DEPTH;
  const maxEntries = req.maxEntries ?? Math.min(EXPLORE_DEFAULT_ENTRIES, o.maxEntriesCeiling);
  const oneFileSystem = req.oneFileSystem ?? true;
  if (maxEntries > o.maxEntriesCeiling) {
    throw new SystemRefusal(
      'bad_request',
      `maxEntries ${maxEntries} is above this host's ceiling of ${o.maxEntriesCeiling} (settings.fs.exploreMaxEntries)`,
    );
  }
  const opened = await openRoot(req.path, o.roots);
  o.checkOwner?.(opened.real);
  const root = o.showAs ? { ...opened, shown: o.showAs(opened.shown) } : opened;
  const limits: ExploreLimits = { depth, maxEntries, oneFileSystem };
  const local = new LocalDevices(o.localFsTypes ?? LOCAL_FS_TYPES);
  const pool = o.pool ?? explorePool;
  const release = await walks.acquire();
  try {
    if (o.stream !== false && !(await capWouldCut(root, limits, local, pool))) {
      // the stream releases the walk's place when it ends, is left, or stalls
      return exploreStream(root, limits, local, pool, release);
    }
    const tree = await walkBreadthFirst(root, limits, local, pool);
    release();
    return tree;
  } catch (e) {
    release();
    throw e;
  }
}

/** The whole compact tree, streamed or not (tests, and the binding protocol's answer). */
export async function exploreTree(req: ExploreOpPayload, o: ExploreOptions): Promise<ExploreOpResult> {
  const r = await exploreWalk(req, o);
  return 'entries' in r ? r : collectExplore(r);
}
