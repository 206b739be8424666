/**
 * Shared helpers for iproute2's JSON output. iproute2 prints one JSON array (on one line unless
 * `-p`); when it fails it prints nothing on stdout, so empty output is an error here and the
 * caller is expected to have looked at the exit code and stderr first.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { jsonErrorLine } from '../../core/json-error';

export function parseJsonArray(parser: string, stdout: string): unknown[] {
  if (stdout.trim() === '') throw new ParseError(parser, 'empty output (did the command fail?)', 1);
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new ParseError(parser, 'not valid JSON (truncated or not iproute2 -j output)', jsonErrorLine(stdout));
  }
  if (!Array.isArray(doc)) throw new ParseError(parser, 'expected a JSON array at the top level', 1);
  return doc;
}

/** zod issues → one short message naming the record and the path, never the values. */
export function describeIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : '(record)'}: ${i.message}`)
    .join('; ');
}

export function recordLabel(index: number, raw: unknown): string {
  const name =
    raw && typeof raw === 'object' && typeof (raw as { ifname?: unknown }).ifname === 'string'
      ? ` (${(raw as { ifname: string }).ifname})`
      : '';
  return `record ${index}${name}`;
}
