/**
 * JSON command output (lsblk -J, findmnt -J, wipefs -J) → value, with failures as ParseError
 * naming the line, and zod issues turned into "field path: message" (never the whole input).
 */
import type * as z from 'zod';
import { ParseError } from '../../core/parse-error.ts';

function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export function parseJsonOutput<T>(parser: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // V8: "... in JSON at position 123" (Node 20) or "(line 4 column 2)" (newer)
    const pos = /position (\d+)/.exec(msg);
    const line = /line (\d+)/.exec(msg);
    const at = pos ? lineOfOffset(text, Number(pos[1])) : line ? Number(line[1]) : undefined;
    throw new ParseError(parser, 'output is not valid JSON', at);
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    throw new ParseError(parser, `unexpected JSON at ${path}: ${issue.message}`);
  }
  return r.data;
}
