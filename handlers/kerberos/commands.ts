/**
 * The argv, environment and limits of every MIT command the Kerberos routes run, in one place
 * so that route tests, demo fixtures and handlers/kerberos/README.md agree on them.
 *
 * - Binaries are absolute, from VARS (the host's allow-list).
 * - `--` ends the options before any operand a client chose (principal, keytab path), so nothing
 *   a client sends is read as an option; the validators in ./names.ts also refuse a leading `-`.
 * - The ticket cache is named by KRB5CCNAME (FILE:<paths.krb5Ccache>), never by `-c` in argv: the
 *   product always works on its own cache whatever the host's environment, and argv stays free of
 *   machine-specific paths (replay fixtures match argv exactly).
 * - The host runs every command with LC_ALL=C and TZ=UTC, which the klist parsers rely on.
 * - Passwords travel only as the answer of a `secret` pty step: never argv, env or stdin.
 */
import { areaSettings } from '../core/settings';
import { kerberosSettings } from './contract';
import type { PtyStep } from '../core/system';
import { bin, path, type Vars } from '../core/vars';

/**
 * Environment of every Kerberos command (kinit, klist, kdestroy, klist -k): the configured
 * krb5.conf, ticket cache and keytab, whatever the host's own environment or `system.env` say,
 * so MIT reads exactly the files the routes manage. The host lets these names through
 * (runtime/areas/kerberos.ts `envAllow`) and a route's env wins over `system.env`.
 */
export function kerberosEnv(vars: Vars): Record<string, string> {
  const keytab = `FILE:${path(vars, 'keytab')}`;
  return {
    KRB5_CONFIG: path(vars, 'krb5Conf'),
    KRB5CCNAME: `FILE:${path(vars, 'krb5Ccache')}`,
    KRB5_KTNAME: keytab,
    KRB5_CLIENT_KTNAME: keytab,
  };
}

export const kinitPasswordArgv = (vars: Vars, principal: string): string[] => [bin(vars, 'kinit'), '--', principal];

/** Without a principal kinit chooses host/<fqdn> itself (MIT's default for -k). */
export const kinitKeytabArgv = (vars: Vars, keytab: string, principal?: string): string[] => [
  bin(vars, 'kinit'),
  '-k',
  '-t',
  keytab,
  ...(principal !== undefined ? ['--', principal] : []),
];

export const klistArgv = (vars: Vars): string[] => [bin(vars, 'klist')];
export const kdestroyArgv = (vars: Vars): string[] => [bin(vars, 'kdestroy')];
/** `-t` timestamps and `-e` enctypes: what the key list's parsed form reports. */
export const keytabListArgv = (vars: Vars, keytab: string): string[] => [
  bin(vars, 'klist'),
  '-k',
  '-t',
  '-e',
  '--',
  keytab,
];

/**
 * kinit's prompts. The second step answers an expired password's "Enter new password:" with ^D
 * (end of file) so kinit fails at once with "Cannot read password" instead of waiting for a
 * new password until the timeout: changing a password is not this route's business.
 */
export function passwordDialogue(password: string): PtyStep[] {
  return [
    { expect: 'Password for [^\\r\\n]*: ', send: password, secret: true },
    { expect: 'Enter new password: ', send: '\x04' },
  ];
}

/**
 * kinit talks to a KDC and may resolve it through DNS, and either can hang. This is its hard
 * limit; settings.kerberos.kinitTimeoutMs overrides it (tests use a short one).
 */
export const DEFAULT_KINIT_TIMEOUT_MS = 20_000;

export function kinitTimeoutMs(vars: Vars): number {
  return areaSettings(vars, 'kerberos', kerberosSettings).kinitTimeoutMs ?? DEFAULT_KINIT_TIMEOUT_MS;
}
