/**
 * JSON command output (lsblk -J, findmnt -J, wipefs -J) → value, with failures as ParseError
 * naming the line, and zod issues as the one issue text (`path: message; …`, never the input).
 */
import type * as z from 'zod';
import { issuesOf, issuesText } from '../core/errors';
import { ParseError } from '../core/parse-error';
import { jsonErrorLine } from '../core/json-error';

export function parseJsonOutput<T>(parser: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ParseError(parser, 'output is not valid JSON', jsonErrorLine(text));
  }
  const r = schema.safeParse(value);
  if (!r.success) throw new ParseError(parser, `unexpected JSON: ${issuesText(issuesOf('', r.error))}`);
  return r.data;
}
