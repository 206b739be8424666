import { ParseError } from '../../handlers/core/parse-error';

/** The ParseError `fn` throws; fails the test if it returns or throws anything else. */
export function parseError(fn: () => unknown): ParseError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw new Error(`expected a ParseError, got ${String(e)}`);
  }
  throw new Error('expected a ParseError, got a result');
}
