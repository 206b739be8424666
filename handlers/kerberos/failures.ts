/**
 * Turns a failed kinit/klist into the error model: the status says whose fault it is, the message
 * carries the tool's own reason (parse/krb5-error.ts), `details.kind` lets a client branch on it.
 * The table is documented in ./README.md.
 *
 *   400 bad_request    the request named something this box or the KDC refuses: wrong password,
 *                      unknown or disabled principal, expired password, a realm with no KDC
 *                      configured, a keytab without the principal's keys, a file that is no keytab
 *   404 not_found      the keytab file or the ticket cache does not exist
 *   409 conflict       krb5.conf (or a file it includes) stops the tools from starting
 *   502 command_failed the KDC is unreachable, clocks are skewed, or the tool failed otherwise
 *   504 command_timeout the tool did not finish in time (a KDC or DNS server that never answers)
 *
 * 401 and 403 are not used: they are about the API token, and these are the domain's credentials.
 */
import { ApiError, errorForStatus } from '../core/errors';
import { type Krb5Error, parseKrb5Error } from './parse/krb5-error';

export const KRB5_FAILURE_STATUS: Readonly<Record<Krb5Error['kind'], 400 | 404 | 409 | 502>> = {
  'password-incorrect': 400,
  'preauthentication-failed': 400,
  'client-not-found': 400,
  'client-revoked': 400,
  'client-expired': 400,
  'password-expired': 400,
  'realm-unknown': 400,
  'keytab-no-suitable-keys': 400,
  'keytab-invalid': 400,
  'keytab-not-found': 404,
  'no-credentials-cache': 404,
  'config-invalid': 409,
  'kdc-unreachable': 502,
  'clock-skew': 502,
  'cannot-read-password': 502,
  unknown: 502,
};

const MAX_OUTPUT_IN_ERROR = 2000;

const toolName = (argv: string[]) => (argv[0] ?? '?').slice((argv[0] ?? '?').lastIndexOf('/') + 1);

/** pty output has CRLF line ends; the classifier reads `\n` lines. */
export const normaliseTty = (text: string): string => text.replace(/\r\n?/g, '\n');

/**
 * Remove a secret from command output. The host's pty binding already does this; doing it here
 * too means a back end that echoes (a misbehaving tool, a fixture) still cannot leak it.
 */
export function scrub(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('********') : text;
}

export interface Krb5Failure {
  argv: string[];
  code: number;
  /** stderr, or for a pty the whole (scrubbed, normalised) output */
  stderr: string;
  stdout?: string;
  /** the principal the command was for, named in the message when the tool does not */
  principal?: string;
  /** appended to the message (e.g. the upper-case hint for a lower-case realm) */
  hint?: string;
}

export function krb5Failure(f: Krb5Failure): ApiError {
  const tool = toolName(f.argv);
  const stderr = f.stderr.trim().slice(0, MAX_OUTPUT_IN_ERROR);
  const details: Record<string, unknown> = { command: f.argv, exitCode: f.code, stderr };
  const e = parseKrb5Error(f.stderr, f.stdout);
  if (!e) {
    return new ApiError('command_failed', `${tool} failed (exit ${f.code}) without saying why`, {
      details: { ...details, kind: 'unknown' },
    });
  }
  const status = KRB5_FAILURE_STATUS[e.kind];
  const who = f.principal !== undefined && !e.message.includes(f.principal) ? ` for ${f.principal}` : '';
  const reason = e.kind === 'password-expired' ? 'Password has expired (change it first)' : e.message;
  return errorForStatus(status, `${tool} failed${who}: ${reason}${f.hint ?? ''}`, {
    details: { ...details, kind: e.kind, ...(e.subject !== undefined ? { subject: e.subject } : {}) },
  });
}

export function krb5Timeout(argv: string[], timeoutMs: number): ApiError {
  return new ApiError(
    'command_timeout',
    `${toolName(argv)} did not finish within ${Math.round(timeoutMs / 1000)} s (is the KDC or its DNS reachable?)`,
    {
      details: { command: argv, timeoutMs },
    },
  );
}
