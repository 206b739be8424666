/**
 * POST /fs/explore's answer as JSON text: the spec's objects built from the host's compact tree
 * (expandExplore) and serialised once, without the run-time check against exploreResultSchema
 * that route() gives small answers. That check made a validated deep copy of the whole tree
 * (for 100 000 entries, one more copy of ~0.2 GB of objects and most of the route's time).
 * Response validation for this answer lives in the tests instead
 * (test/routes/fs-explore-json.test.ts: the text parses with the schema, on synthetic trees with
 * awkward names and times and on a real walk).
 *
 * Measured and rejected: writing the text by hand, entry by entry, as template strings joined
 * at the end. V8's JSON.stringify over the objects was 2–4× faster and used less memory (each
 * template piece is a rope of ~60 cons-strings until the join flattens them).
 */
import { expandExplore, type ExploreOpResult } from './explore';

export function exploreJson(r: ExploreOpResult): string {
  return JSON.stringify(expandExplore(r));
}
