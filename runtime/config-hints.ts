/**
 * "Did you mean" for a mistyped config key: an unknown key the schema refuses is named with the
 * known key of the same object it is closest to (at most two edits, or one a prefix of the other),
 * so `listen: { prot: 80 }` says `did you mean "port"?` instead of leaving the operator to read the
 * docs. Only the config file and area settings use it; request validation keeps the plain message.
 */
import * as z from 'zod';
import { issuesOf, issuesText } from '../handlers/core/errors';

function unwrap(s: z.ZodType | undefined): z.ZodType | undefined {
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
    s = s.unwrap() as z.ZodType;
  return s;
}

/** The keys of the object schema at `path` (optional, default and nullable wrappers looked through). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s = unwrap(schema);
  for (const seg of path) {
    if (s instanceof z.ZodObject) s = unwrap((s.shape as Record<string, z.ZodType | undefined>)[String(seg)]);
    else if (s instanceof z.ZodRecord) s = unwrap(s.valueType as z.ZodType);
    else return [];
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const here = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = here;
    }
  }
  return row[b.length];
}

/** The closest known key, or undefined when none is close enough to be a typo. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : distance(key, k);
    if (d <= 2 && (!best || d < best.d)) best = { k, d };
  }
  if (best) return best.k;
  return known.find((k) => key.length >= 3 && (k.startsWith(key) || key.startsWith(k)));
}

/** `issuesText(issuesOf(location, error))` with a hint on each unknown key that looks like a typo. */
export function configIssuesText(location: string, error: z.ZodError, schema: z.ZodType): string {
  const hinted = error.issues.map((i) => {
    if (i.code !== 'unrecognized_keys') return i;
    const known = keysAt(schema, i.path);
    const hints = i.keys
      .map((k) => closestKey(k, known))
      .map((c, n) => (c ? `"${i.keys[n]}": did you mean "${c}"?` : ''));
    const said = hints.filter(Boolean).join('; ');
    return said ? { ...i, message: `${i.message} (${said})` } : i;
  });
  return issuesText(issuesOf(location, { issues: hinted }));
}
