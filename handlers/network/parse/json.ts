/**
 * Shared helpers for iproute2's JSON output. iproute2 prints one JSON array (on one line unless
 * `-p`); when it fails it prints nothing on stdout, so empty output is an error here and the
 * caller is expected to have looked at the exit code and stderr first.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error.ts';

/** 1-based line of a character offset, so a syntax error can name where it happened. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Offset of the first JSON syntax error in `text` (text.length when it ends too early).
 * A small recursive-descent scanner, used only after JSON.parse has already failed.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const lit = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const str = () => {
    i++; // opening quote
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') i += 2;
      else if ((c ?? '').charCodeAt(0) < 0x20) fail();
      else i++;
    }
    fail();
  };
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    else i += m[0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '"') str();
    else if (c === 't') lit('true');
    else if (c === 'f') lit('false');
    else if (c === 'n') lit('null');
    else num();
  };
  try {
    value();
    ws();
    return i < text.length ? i : text.length;
  } catch (at) {
    return typeof at === 'number' ? Math.min(at, text.length) : 0;
  }
}

export function parseJsonArray(parser: string, stdout: string): unknown[] {
  if (stdout.trim() === '') throw new ParseError(parser, 'empty output (did the command fail?)', 1);
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    // V8's messages carry a position only for some errors, so find it ourselves
    throw new ParseError(parser, 'not valid JSON (truncated or not iproute2 -j output)', lineOf(stdout, jsonErrorOffset(stdout)));
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
