import { ParseError } from '../../handlers/core/parse-error';

/**
 * What an expected parse refusal says, the one way tests write it: in code
 * `parseError(() => parse(text), { parser: 'tc-filter', line: 38 })`, and in a fixture's
 * `<name>.expected.json` as `{"parseError": {"parser": "tc-filter", "line": 38}}` (`line: null`:
 * the error names no line).
 */
export interface ExpectedParseError {
  parser?: string;
  line?: number | null;
}

/** `{"parseError": {...}}` in an expected.json, or null when the file holds a parse result. */
export function expectedParseError(expected: unknown): ExpectedParseError | null {
  if (typeof expected !== 'object' || expected === null || !('parseError' in expected)) return null;
  return (expected as { parseError: ExpectedParseError }).parseError;
}

/**
 * The ParseError `fn` throws; fails the test if it returns or throws anything else, or when the
 * error is not the parser or the line `want` names.
 */
export function parseError(fn: () => unknown, want: ExpectedParseError = {}): ParseError {
  let err: ParseError | undefined;
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ParseError)) throw new Error(`expected a ParseError, got ${String(e)}`);
    err = e;
  }
  if (!err) throw new Error('expected a ParseError, got a result');
  if (want.parser !== undefined && err.parser !== want.parser)
    throw new Error(`expected a ParseError from ${want.parser}, got one from ${err.parser}: ${err.message}`);
  if (want.line !== undefined) {
    const line = err.line ?? null;
    if (line !== want.line)
      throw new Error(`expected a ParseError at line ${String(want.line)}, got line ${String(line)}: ${err.message}`);
    if (line !== null && !err.message.includes(`line ${line}:`))
      throw new Error(`the message does not name line ${line}: ${err.message}`);
  }
  return err;
}

/** What a parse gives: its result, or its refusal as `{parseError: {parser, line}}` (the expected.json form). */
export function parseOutcome(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ParseError) return { parseError: { parser: e.parser, line: e.line ?? null } };
    throw e;
  }
}
