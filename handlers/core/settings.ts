/**
 * The one way a route reads its area's settings: `settings.<area>` as the area's schema makes it
 * (defaults applied). The host parsed each area's settings at start and hands the result in
 * VARS; an embedder may hand the raw config. Either way it is parsed once per settings object
 * (not per request), and a value the schema refuses is the host's misconfiguration: a 500 whose
 * log line names the key, never a guess.
 */
import type * as z from 'zod';
import { ApiError, issuesOf, issuesText } from './errors';
import type { Vars } from './vars';

const parsed = new WeakMap<object, Map<string, unknown>>();

export function areaSettings<T>(vars: Vars, area: string, schema: z.ZodType<T, unknown>): T {
  const all = vars.settings ?? {};
  let byArea = parsed.get(all);
  if (!byArea) parsed.set(all, (byArea = new Map()));
  if (byArea.has(area)) return byArea.get(area) as T;
  const r = schema.safeParse(all[area] ?? {});
  if (!r.success)
    throw new ApiError(
      'internal',
      `the host configuration is invalid: ${issuesText(issuesOf(`settings.${area}`, r.error))}`,
    );
  byArea.set(area, r.data);
  return r.data;
}
