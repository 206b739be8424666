/**
 * POST /fs/explore's answer as JSON text, from the host's compact tree:
 * - serialised one top-level entry at a time: the spec's objects (expandExplore) exist for one
 *   subtree at once, never for the whole answer, and the pieces are joined the way
 *   JSON.stringify joins an array, so the bytes are exactly `JSON.stringify(expandExplore(r))`;
 * - produced lazily (exploreJsonChunks): the route answers the pieces as they are written to
 *   the socket (Reply.chunks), and each top-level entry's compact subtree is let go once its
 *   piece is made, so the host holds the compact tree shrinking as it goes, one subtree's
 *   objects and one piece, never the whole text (57 MB at 100 000 entries) or a copy of it;
 * - without the run-time check against exploreResultSchema that route() gives small answers
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
import { expandExplore, type CompactEntry, type ExploreOpResult } from './explore';

/** Top-level entries serialised per piece (a piece is at least one whole top-level subtree). */
const PIECE_CHARS = 64 * 1024;

/**
 * The answer's text in pieces. Consumes `r.entries`: each entry is dropped once serialised (the
 * host op's result is built for this one call), so iterate it once.
 */
export function* exploreJsonChunks(r: ExploreOpResult): Generator<string, void, undefined> {
  const { entries, ...rest } = r;
  // the answer without its files, then the files put in as JSON.stringify writes an array
  const tail = JSON.stringify(expandExplore({ ...rest, entries: [] }));
  const empty = '{"files":[]';
  if (!tail.startsWith(empty)) throw new Error('explore answer must start with its files');
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
  yield `${piece}]${tail.slice(empty.length)}`;
}

/** The whole answer as one text, leaving `r` as it was (tests; the route streams exploreJsonChunks). */
export function exploreJson(r: ExploreOpResult): string {
  return [...exploreJsonChunks({ ...r, entries: [...r.entries] })].join('');
}
