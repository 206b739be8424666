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

/**
 * Best-effort line of a JSON.parse failure. V8 says "... at position N" for some errors,
 * "(line L column C)" in newer releases, and for an unexpected token only quotes the source
 * around it: `Unexpected token 'o', ..."<10 chars before><10 after>"... is not valid JSON`;
 * that excerpt is located in the text to recover the position.
 */
function jsonErrorLine(text: string, msg: string): number | undefined {
  const pos = /position (\d+)/.exec(msg);
  if (pos) return lineOfOffset(text, Number(pos[1]));
  const line = /\(line (\d+) column \d+\)/.exec(msg);
  if (line) return Number(line[1]);
  if (/end of JSON input/.test(msg)) return lineOfOffset(text, text.length);
  const excerpt = /^Unexpected token .*?, (\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(msg);
  if (excerpt) {
    const at = text.indexOf(excerpt[2]);
    // with a leading "..." the token sits 10 characters into the excerpt; without, the excerpt
    // starts at the beginning of the text and the token is at most 10 characters in
    if (at >= 0) return lineOfOffset(text, excerpt[1] ? at + 10 : Math.min(10, text.length));
  }
  return undefined;
}

export function parseJsonOutput<T>(parser: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new ParseError(parser, 'output is not valid JSON', jsonErrorLine(text, msg));
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
    throw new ParseError(parser, `unexpected JSON at ${path}: ${issue.message}`);
  }
  return r.data;
}
