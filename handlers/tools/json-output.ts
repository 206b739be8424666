/**
 * JSON command output (lsblk -J, findmnt -J, wipefs -J, iproute2 -j) → value, with failures as
 * ParseError naming the line, and zod issues as the one issue text (`path: message; …`, never
 * the input).
 */
import type * as z from 'zod';
import { issuesOf, issuesText } from '../core/errors';
import { ParseError } from '../core/parse-error';
import { jsonErrorLine } from '../core/json-error';

/** What a failed safeParse carries (zod's error, without tying callers to one zod type). */
type Issues = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

function readJson(parser: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ParseError(parser, 'output is not valid JSON', jsonErrorLine(text));
  }
}

export function parseJsonOutput<T>(parser: string, text: string, schema: z.ZodType<T>): T {
  const r = schema.safeParse(readJson(parser, text));
  if (!r.success) throw new ParseError(parser, `unexpected JSON: ${issuesText(issuesOf('', r.error))}`);
  return r.data;
}

/**
 * Output that is one JSON array of records (iproute2 `-j`), its elements unchecked: the caller
 * checks each with recordError for the message. Empty output is an error, not an empty list:
 * iproute2 prints nothing on stdout when it fails (the caller has looked at the exit code).
 */
export function parseJsonArrayOutput(parser: string, text: string): unknown[] {
  if (text.trim() === '') throw new ParseError(parser, 'empty output (did the command fail?)', 1);
  const doc = readJson(parser, text);
  if (!Array.isArray(doc)) throw new ParseError(parser, 'expected a JSON array at the top level', 1);
  return doc;
}

/**
 * The ParseError for record `index` of a JSON array whose check failed: `record 2 (eth0): mtu:
 * …` (the `ifname` when the record has one), `at` prefixing the issue paths of a part checked
 * on its own (`linkinfo.info_data`).
 */
export function recordError(parser: string, index: number, raw: unknown, error: Issues, at = ''): ParseError {
  const name =
    raw && typeof raw === 'object' && typeof (raw as { ifname?: unknown }).ifname === 'string'
      ? ` (${(raw as { ifname: string }).ifname})`
      : '';
  return new ParseError(parser, `record ${index}${name}: ${issuesText(issuesOf(at, error))}`);
}
