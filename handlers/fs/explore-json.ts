/**
 * POST /fs/explore's answer as JSON text, from the host's compact tree:
 * - serialised one top-level entry at a time: the spec's objects (expandExplore) exist for one
 *   subtree at once, never for the whole answer, and the pieces are joined the way
 *   JSON.stringify joins an array, so the bytes are exactly `JSON.stringify(expandExplore(r))`;
 * - produced lazily (exploreJsonChunks): the route answers the pieces as they are written to
 *   the socket (Reply.chunks), and each top-level entry's compact subtree is let go once its
 *   piece is made, so the host holds the compact tree shrinking as it goes, one subtree's
 *   objects and one piece, never the whole text (57 MB at 100 000 entries) or a copy of it;
 * - without the run-time check against exploreAnswer (responses.ts) that route() gives small answers
 *   (it made a validated deep copy of the whole tree: for 100 000 entries ~0.2 GB more and most
 *   of the route's time). Response validation for this answer lives in the tests instead
 *   (test/routes/fs-explore-json.test.ts: the text is the serialised objects byte for byte and
 *   parses with the schema, on synthetic trees with awkward names and times and a real walk).
 *
 * Everything that can refuse (the path, the roots, the limits) is decided by the walk, which
 * ends before the first piece; the pieces are pure serialisation of data already in hand. The
 * answer's `total`, `truncated`, `truncatedBy`, `limits` and `errors` follow `files`, and are
 * known once the walk is done, so they are simply the last piece.
 *
 * Measured and rejected: writing the text by hand, entry by entry, as template strings joined
 * at the end. V8's JSON.stringify over the objects was 2–4× faster and used less memory (each
 * template piece is a rope of ~60 cons-strings until the join flattens them).
 */
import {
  childPrefix,
  entryObject,
  expandExplore,
  STAT_STRIDE,
  type CompactEntry,
  type ExploreOpResult,
  type ExploreStream,
} from './explore';
import type { ExploreEntry } from './responses';

/** Top-level entries serialised per piece (a piece is at least one whole top-level subtree). */
const PIECE_CHARS = 64 * 1024;
/** childless entries serialised at once by the streamed answer (~570 bytes each) */
const RUN_ENTRIES = 64;

const NO_FILES = '{"files":[]';
/** the children of every entry the stream writes (it writes them itself): only ever serialised */
const NO_CHILDREN: ExploreEntry[] = [];

/** The answer's text after its files (`]` and the rest), from everything but the entries. */
function afterFiles(r: Omit<ExploreOpResult, 'entries'>): string {
  const text = JSON.stringify(expandExplore({ ...r, entries: [] }));
  if (!text.startsWith(NO_FILES)) throw new Error('explore answer must start with its files');
  return `]${text.slice(NO_FILES.length)}`;
}

/**
 * The answer's text in pieces. Consumes `r.entries`: each entry is dropped once serialised (the
 * host op's result is built for this one call), so iterate it once.
 */
export function* exploreJsonChunks(r: ExploreOpResult): Generator<string, void, undefined> {
  const { entries, ...rest } = r;
  // the answer without its files, then the files put in as JSON.stringify writes an array
  const tail = afterFiles(rest);
  let piece = '{"files":[';
  for (let i = 0; i < entries.length; i++) {
    const one: CompactEntry = entries[i];
    entries[i] = undefined as unknown as CompactEntry; // let the subtree go once written
    piece += (i > 0 ? ',' : '') + JSON.stringify(expandExplore({ ...rest, entries: [one] }).files[0]);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  yield piece + tail;
}

/** The whole answer as one text, leaving `r` as it was (tests; the route streams exploreJsonChunks). */
export function exploreJson(r: ExploreOpResult): string {
  return [...exploreJsonChunks({ ...r, entries: [...r.entries] })].join('');
}

/** How JSON.stringify writes an entry's (empty) children; only the key can contain it unescaped. */
const EMPTY_CHILDREN = ',"children":[]';

/** A directory being written: its children's path prefix, how many are still to come, its closing text. */
interface OpenDir {
  prefix: string;
  left: number;
  close: string;
  first: boolean;
}

/**
 * The answer's text from a streamed walk (ExploreStream), as the walk goes: the same bytes as
 * exploreJsonChunks over the collected tree. A directory with children is written as its object
 * up to `"children":[`, then its children, then the rest of the object; runs of up to RUN_ENTRIES
 * childless entries are serialised together (one JSON.stringify per run). So the host holds the
 * open directories' paths, one batch of records and one piece, whatever the size of the tree.
 *
 * Every string made here stays well below V8's large-object size (128 KiB): a piece is handed
 * on as soon as it reaches PIECE_CHARS, a run is at most ~40 KB. A string above it is allocated
 * in its own mapped pages and freed only by a full GC; serialising a directory's whole run at
 * once (~550 KB for 1,000 files), and the piece that held it, left ~110 MB of such garbage per
 * 100,000-entry walk, most of the host's peak RSS.
 */
export async function* exploreJsonStream(s: ExploreStream): AsyncGenerator<string, void, undefined> {
  const root: OpenDir = { prefix: childPrefix(s.path), left: Infinity, close: '', first: true };
  const open: OpenDir[] = [root];
  let piece = '{"files":[';
  let run: ExploreEntry[] = []; // childless entries of the innermost open directory, not yet written
  const flushRun = () => {
    if (run.length === 0) return;
    const dir = open[open.length - 1];
    piece += (dir.first ? '' : ',') + JSON.stringify(run).slice(1, -1);
    dir.first = false;
    run = [];
  };
  for await (const b of s.records()) {
    const { names, flags, stats, childCounts } = b;
    for (let k = 0; k < names.length; k++) {
      const name = names[k];
      const childCount = childCounts[k];
      let dir = open[open.length - 1];
      const path = dir.prefix + name;
      dir.left--;
      if (childCount === 0) {
        run.push(entryObject(name, flags[k], stats, k * STAT_STRIDE, path, NO_CHILDREN));
        if (run.length >= RUN_ENTRIES) flushRun();
      } else {
        flushRun();
        const text = JSON.stringify(entryObject(name, flags[k], stats, k * STAT_STRIDE, path, NO_CHILDREN, childCount));
        const at = text.indexOf(EMPTY_CHILDREN);
        piece += (dir.first ? '' : ',') + text.slice(0, at) + ',"children":[';
        dir.first = false;
        open.push({
          prefix: childPrefix(path),
          left: childCount,
          close: `]${text.slice(at + EMPTY_CHILDREN.length)}`,
          first: true,
        });
        continue;
      }
      while (dir.left === 0 && open.length > 1) {
        flushRun();
        piece += dir.close;
        open.pop();
        dir = open[open.length - 1];
      }
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
    }
  }
  flushRun();
  if (open.length > 1) throw new Error('explore stream ended inside a directory');
  yield piece + afterFiles({ path: s.path, limits: s.limits, ...s.trailer() });
}
