/**
 * `systemctl is-enabled -- <unit>`: one word on stdout (systemctl(1), "is-enabled" table). Only
 * `enabled` and `enabled-runtime` mean the share starts at boot; every other known state means it
 * does not. An unknown word is a ParseError (the exit code is not used: it is 0 for `static` too).
 */
import { ParseError } from '../../core/parse-error';

const ENABLED = new Set(['enabled', 'enabled-runtime']);
const NOT_ENABLED = new Set([
  'linked',
  'linked-runtime',
  'alias',
  'masked',
  'masked-runtime',
  'static',
  'indirect',
  'disabled',
  'generated',
  'transient',
  'bad',
  'not-found',
]);

export function parseIsEnabled(stdout: string): boolean {
  const word = stdout.split('\n')[0].trim();
  if (ENABLED.has(word)) return true;
  if (NOT_ENABLED.has(word)) return false;
  throw new ParseError('systemctl is-enabled', word === '' ? 'no state printed' : 'unknown unit file state', 1);
}
