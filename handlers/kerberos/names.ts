/**
 * Strict validators for names that reach files or argv in the Kerberos area. They are stricter
 * than MIT itself on purpose: every value ends up as an argv element of kinit/klist or as a file
 * name under /etc/krb5.conf.d, so none may start with `-` (option injection), contain `/` or
 * `..` (path traversal), NUL or control characters, or blanks.
 */
import * as z from 'zod';

/**
 * Name of an individual realm file, as create, details, update and delete take it: the realm
 * itself (`CORP.EXAMPLE.COM`), a short name (`lab`), or a file name the listing shows
 * (`lab.conf`, `plain_name`). Letters, digits, `.`, `_`, `-`; starting with a letter or digit
 * (never a dotfile or an option), no `..`, no `/`: it cannot name anything outside the include
 * directory. Which file it addresses: see realmFileCandidates in ./conf-files.ts.
 */
export const REALM_FILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,68}$/;
export const realmFileName = z
  .string()
  .regex(
    REALM_FILE_NAME_PATTERN,
    'realm file name: 1-69 of A-Z a-z 0-9 . _ -, starting with a letter or digit (e.g. CORP.EXAMPLE.COM, lab or lab.conf)',
  )
  .refine((s) => !s.includes('..'), 'realm file name: ".." is not allowed')
  .describe(
    'realm file in the include directory: `<name>.conf`, or the file itself when the name ends in `.conf` or is a listed file without extension (letters, digits, _ and -); letters, digits, . _ -, starting with a letter or digit, no ".."',
  );

/**
 * Realm name. Usually upper case (`EXAMPLE.TEST`) but MIT accepts any case (Debian's default
 * krb5.conf has `stanford.edu`), so case is not forced. It is also a tag in krb5.conf, so it
 * must be one word without `=`, `*`, brackets or braces; dots and dashes only inside.
 */
export const REALM_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,253}[A-Za-z0-9])?$/;
export const realmName = z
  .string()
  .regex(REALM_NAME_PATTERN, 'realm: letters, digits, . _ -, starting and ending with a letter or digit')
  .refine((s) => !s.includes('..'), 'realm: empty component (..)');

/**
 * One component of a principal name (`alice`, `host`, `nas01.example.test`, `NAS01$`).
 * ASCII letters, digits and `. _ - $ +`; not starting with `-` or `.`. MIT allows more (any
 * byte with `\` escapes) but the appliance has no need for it and every extra character is a
 * quoting hazard in argv and logs.
 */
const COMPONENT = '[A-Za-z0-9_$+][A-Za-z0-9._$+-]{0,127}';
const REALM = '[A-Za-z0-9](?:[A-Za-z0-9._-]{0,253}[A-Za-z0-9])?';

/** `primary[/instance…][@REALM]`, e.g. `alice`, `alice@EXAMPLE.TEST`, `host/nas01.example.test@EXAMPLE.TEST`. */
export const PRINCIPAL_PATTERN = new RegExp(`^${COMPONENT}(?:/${COMPONENT}){0,3}(?:@${REALM})?$`);
export const principal = z
  .string()
  .max(512)
  .regex(
    PRINCIPAL_PATTERN,
    'principal: name[/instance][@REALM] of letters, digits and . _ - $ +, not starting with - or .',
  )
  .refine((s) => !s.includes('..'), 'principal: ".." is not allowed');

/** A bare user name for kinit (`alice`, `Administrator`): one component, no realm. */
export const USERNAME_PATTERN = new RegExp(`^${COMPONENT}$`);
export const username = z
  .string()
  .superRefine((s, ctx) => {
    const at = s.indexOf('@');
    if (at >= 0) {
      const realm = s.slice(at + 1);
      ctx.addIssue({
        code: 'custom',
        message: `username: give the user name alone and the realm in \`realm\`${realm ? ` (username ${s.slice(0, at) || '…'}, realm ${realm})` : ''}`,
      });
    } else if (!USERNAME_PATTERN.test(s))
      ctx.addIssue({ code: 'custom', message: 'username: letters, digits and . _ - $ +, not starting with - or .' });
    else if (s.includes('..')) ctx.addIssue({ code: 'custom', message: 'username: ".." is not allowed' });
  })
  .describe('user name alone (alice), without @REALM: the realm goes in `realm` (default: default_realm of krb5.conf)');

/** A hint for a realm with lower-case letters: MIT compares realms case-sensitively. */
export function realmCaseHint(realm: string): string {
  return /[a-z]/.test(realm)
    ? ` (realm names are case-sensitive and usually upper case: did you mean ${realm.toUpperCase()}?)`
    : '';
}

/**
 * Keytab path given to `klist -k` / `kinit -t`: absolute, normalised (no `.`/`..`/empty
 * segments), no control characters or blanks, no `:` (MIT would read `X:rest` as a keytab type).
 * Which directories are allowed is the SYSTEM binding's business, not this check's.
 */
export const KEYTAB_PATH_PATTERN = /^(?:\/[A-Za-z0-9._@+-]+)+$/;
export const keytabPath = z
  .string()
  .max(4096)
  .regex(KEYTAB_PATH_PATTERN, 'keytab path: absolute, of letters, digits and . _ - @ +')
  .refine(
    (s) => !s.split('/').some((seg) => seg === '.' || seg === '..'),
    'keytab path: . and .. segments are not allowed',
  );
