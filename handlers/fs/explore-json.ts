/**
 * POST /fs/explore's answer as JSON text, from the host's compact tree:
 * - serialised one top-level entry at a time: the spec's objects (expandExplore) exist for one
 *   subtree at once, never for the whole answer, and the pieces are joined the way
 *   JSON.stringify joins an array, so the bytes are exactly `JSON.stringify(expandExplore(r))`;
 * - without the run-time check against exploreResultSchema that route() gives small answers
 *   (it made a validated deep copy of the whole tree: for 100 000 entries ~0.2 GB more and most
 *   of the route's time). Response validation for this answer lives in the tests instead
 *   (test/routes/fs-explore-json.test.ts: the text is the serialised objects byte for byte and
 *   parses with the schema, on synthetic trees with awkward names and times and a real walk).
 *
 * Measured and rejected: writing the text by hand, entry by entry, as template strings joined
 * at the end. V8's JSON.stringify over the objects was 2–4× faster and used less memory (each
 * template piece is a rope of ~60 cons-strings until the join flattens them).
 */
import { expandExplore, type ExploreOpResult } from './explore';

export function exploreJson(r: ExploreOpResult): string {
  const { entries, ...rest } = r;
  const pieces: string[] = [];
  for (const e of entries) pieces.push(JSON.stringify(expandExplore({ ...rest, entries: [e] }).files[0]));
  // the answer without its files, then the files put in as JSON.stringify writes an array
  const tail = JSON.stringify(expandExplore({ ...rest, entries: [] }));
  const empty = '{"files":[]';
  if (!tail.startsWith(empty)) throw new Error('explore answer must start with its files');
  return `{"files":[${pieces.join(',')}]${tail.slice(empty.length)}`;
}
