/**
 * Classifies the error line MIT tools print on stderr when they fail (`kinit: <msg> while
 * getting initial credentials`, `klist: No credentials cache found (filename: …)`), so a route
 * can answer "wrong password" or "no ticket" instead of a bare exit code. Messages are the
 * com_err texts of krb5 1.20 (Debian 12), LC_ALL=C.
 *
 * Returns null when stderr holds no `tool: message` line (`klist -s` fails silently). Unknown
 * messages are kept with kind `unknown`; this is a classifier, not a validator, so it does not
 * throw.
 */
import * as z from 'zod';

export const KRB5_ERROR_KINDS = [
  'no-credentials-cache',
  'keytab-not-found',
  'keytab-no-suitable-keys',
  'keytab-invalid',
  'password-incorrect',
  'preauthentication-failed',
  'client-not-found',
  'client-revoked',
  'client-expired',
  'password-expired',
  'cannot-read-password',
  'kdc-unreachable',
  'realm-unknown',
  'clock-skew',
  'config-invalid',
  'unknown',
] as const;
export const krb5ErrorKind = z.enum(KRB5_ERROR_KINDS);

export const krb5Error = z.object({
  /** Program that printed it (`kinit`, `klist`, `kvno`, …). */
  tool: z.string().min(1),
  kind: krb5ErrorKind,
  /** The message without the `tool: ` prefix and without the ` while …` tail. */
  message: z.string().min(1),
  /** The ` while …` tail: `getting initial credentials`, `starting keytab scan`, … */
  during: z.string().min(1).optional(),
  /** What the message names: a principal, realm, keytab path or cache name (see parse/krb5-error.ts). */
  subject: z.string().min(1).optional(),
});
export type Krb5Error = z.infer<typeof krb5Error>;

type Kind = Krb5Error['kind'];

/** Message pattern → kind; group 1, when present, is the `subject` the message names. */
const KINDS: [RegExp, Kind][] = [
  [/^No credentials cache found \(filename: (.+)\)$/, 'no-credentials-cache'],
  [/^No credentials cache found$/, 'no-credentials-cache'],
  [/^Key table file '(.+)' not found$/, 'keytab-not-found'],
  [/^Keytab contains no suitable keys for (.+)$/, 'keytab-no-suitable-keys'],
  [/^Unsupported key table format version number$/, 'keytab-invalid'],
  [/^Bad format in keytab$/, 'keytab-invalid'],
  [/^Password incorrect$/, 'password-incorrect'],
  [/^Preauthentication failed$/, 'preauthentication-failed'],
  [/^Client '(.+)' not found in Kerberos database$/, 'client-not-found'],
  [/^Client's credentials have been revoked$/, 'client-revoked'],
  [/^Client's entry in database has expired$/, 'client-expired'],
  [/^Password has expired$/, 'password-expired'],
  [/^Cannot read password$/, 'cannot-read-password'],
  [/^Cannot contact any KDC for realm '(.+)'$/, 'kdc-unreachable'],
  [/^Cannot find KDC for realm "(.+)"$/, 'realm-unknown'],
  [/^Clock skew too great$/, 'clock-skew'],
  [/^Improper format of Kerberos configuration file$/, 'config-invalid'],
  [/^Configuration file does not specify default realm$/, 'config-invalid'],
  // prof_err.et: an include/includedir target that is missing or unreadable breaks every tool.
  [/^Included profile (?:file|directory) could not be read$/, 'config-invalid'],
];

/**
 * @param stdout optional: kinit prints `Password expired.  You must change it now.` on stdout
 *   and then fails with `Cannot read password` on stderr (no tty to ask for a new one); with
 *   stdout given, that case is reported as `password-expired`.
 */
export function parseKrb5Error(stderr: string, stdout?: string): Krb5Error | null {
  // The last `tool: …` line wins: kinit may print a warning or prompt before failing.
  const lines = stderr.split('\n').filter((l) => /^[a-z][a-z0-9_.]*: \S/.test(l));
  const last = lines[lines.length - 1];
  if (last === undefined) return null;
  const colon = last.indexOf(': ');
  const tool = last.slice(0, colon);
  let message = last.slice(colon + 2).trimEnd();
  let during: string | undefined;
  // com_err appends " while <what>"; take the last one (a path could itself contain " while ").
  const w = message.lastIndexOf(' while ');
  if (w > 0 && w + 7 < message.length) {
    during = message.slice(w + 7);
    message = message.slice(0, w);
  }
  let kind: Kind = 'unknown';
  let subject: string | undefined;
  for (const [re, k] of KINDS) {
    const m = re.exec(message);
    if (m) {
      kind = k;
      subject = m[1];
      break;
    }
  }
  if (
    kind === 'cannot-read-password' &&
    stdout !== undefined &&
    /^Password expired\. {2}You must change it now\.$/m.test(stdout)
  ) {
    kind = 'password-expired';
  }
  return {
    tool,
    kind,
    message,
    ...(during !== undefined ? { during } : {}),
    ...(subject !== undefined ? { subject } : {}),
  };
}
