/**
 * Strict validators for names that reach files or argv in the Kerberos area. They are stricter
 * than MIT itself on purpose: every value ends up as an argv element of kinit/klist or as a file
 * name under /etc/krb5.conf.d, so none may start with `-` (option injection), contain `/` or
 * `..` (path traversal), NUL or control characters, or blanks.
 */
import * as z from 'zod';

/**
 * Name of an individual realm file, without extension: stored as `<name>.conf` in the
 * includedir. MIT's includedir reads files whose names are only `[A-Za-z0-9_-]`, or (1.15+) end
 * in `.conf` and do not start with `.`; `<name>.conf` with this pattern satisfies both rules,
 * and cannot be a dotfile, an option, or a path.
 */
export const REALM_FILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const RealmFileNameSchema = z
  .string()
  .regex(REALM_FILE_NAME_PATTERN, 'realm file name: 1-64 of A-Z a-z 0-9 _ -, starting with a letter or digit, no extension');

/**
 * Realm name. Usually upper case (`EXAMPLE.TEST`) but MIT accepts any case (Debian's default
 * krb5.conf has `stanford.edu`), so case is not forced. It is also a tag in krb5.conf, so it
 * must be one word without `=`, `*`, brackets or braces; dots and dashes only inside.
 */
export const REALM_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,253}[A-Za-z0-9])?$/;
export const RealmNameSchema = z
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
export const PrincipalSchema = z
  .string()
  .max(512)
  .regex(PRINCIPAL_PATTERN, 'principal: name[/instance][@REALM] of letters, digits and . _ - $ +, not starting with - or .')
  .refine((s) => !s.includes('..'), 'principal: ".." is not allowed');

/** A bare user name for kinit (`alice`, `Administrator`): one component, no realm. */
export const USERNAME_PATTERN = new RegExp(`^${COMPONENT}$`);
export const UsernameSchema = z
  .string()
  .regex(USERNAME_PATTERN, 'username: letters, digits and . _ - $ +, not starting with - or .')
  .refine((s) => !s.includes('..'), 'username: ".." is not allowed');

/**
 * Keytab path given to `klist -k` / `kinit -t`: absolute, normalised (no `.`/`..`/empty
 * segments), no control characters or blanks, no `:` (MIT would read `X:rest` as a keytab type).
 * Which directories are allowed is the SYSTEM binding's business, not this check's.
 */
export const KEYTAB_PATH_PATTERN = /^(?:\/[A-Za-z0-9._@+-]+)+$/;
export const KeytabPathSchema = z
  .string()
  .max(4096)
  .regex(KEYTAB_PATH_PATTERN, 'keytab path: absolute, of letters, digits and . _ - @ +')
  .refine((s) => !s.split('/').some((seg) => seg === '.' || seg === '..'), 'keytab path: . and .. segments are not allowed');
