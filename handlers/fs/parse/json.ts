/**
 * JSON command output (lsblk -J, findmnt -J, wipefs -J) → value, with failures as ParseError
 * naming the line, and zod issues turned into "field path: message" (never the whole input).
 */
import type * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { jsonErrorLine } from '../../core/json-error';

export function parseJsonOutput<T>(parser: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ParseError(parser, 'output is not valid JSON', jsonErrorLine(text));
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    throw new ParseError(parser, `unexpected JSON at ${path}: ${issue.message}`);
  }
  return r.data;
}
