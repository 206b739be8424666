import * as z from 'zod';
import { validationFailed } from './errors';

/**
 * The query keys a route takes: its query schema's fields, none without one. The schema must be
 * an object so its keys can be listed; anything else is a bug of the route, caught at load.
 */
export function queryKeysOf(schema: z.ZodType | undefined, route: string): ReadonlySet<string> {
  if (schema === undefined) return new Set();
  if (!(schema instanceof z.ZodObject)) throw new Error(`${route}: a query schema must be a z.object`);
  return new Set(Object.keys(schema.shape));
}

/**
 * Query strings are strict like bodies: a key the route does not take is a 400 naming it (a typo
 * such as `?verbos=1` must not silently give the default), and a route without a query schema
 * takes none. One rule here, so no route can forget it or opt out with a non-strict schema.
 */
export function refuseUnknownQueryKeys(query: Record<string, unknown>, known: ReadonlySet<string>): void {
  const unknown = Object.keys(query).find((k) => !known.has(k));
  if (unknown === undefined) return;
  const takes = [...known].sort();
  throw validationFailed(
    `query.${unknown}`,
    takes.length === 0
      ? 'unknown query parameter: this route takes none'
      : `unknown query parameter: this route takes ${takes.join(', ')}`,
  );
}
