/**
 * What every area's host ops share: a payload checked against the op's zod schema, refused as a
 * 400 naming the op and each issue's path (the one issue format, handlers/core/errors.ts).
 */
import type * as z from 'zod';
import { issuesOf, issuesText } from '../../handlers/core/errors';
import { SystemRefusal } from './types';

export function payloadOf<T>(schema: z.ZodType<T>, op: string, p: unknown): T {
  const r = schema.safeParse(p);
  if (!r.success) throw new SystemRefusal('bad_request', `${op}: ${issuesText(issuesOf('payload', r.error))}`);
  return r.data;
}
