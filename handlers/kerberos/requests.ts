/**
 * What a client sends to the Kerberos routes (the answers are in ./responses.ts). Every value
 * that reaches argv or a file name goes through the strict validators of ./names.ts.
 */
import * as z from 'zod';
import { keytabPath, principal, realmFileName, realmName, username } from './names';
import { krb5ConfInput } from './render/krb5-conf';

/**
 * The domain admin's password. It is typed into kinit's prompt through a pseudo-terminal, whose
 * line discipline acts on control characters (CR/LF end the line early, ^C ^D ^U ^W erase or
 * abort it), so they are refused; 1024 stays well inside the tty's 4096-byte line limit. The
 * messages never repeat the value.
 */
const password = z
  .string()
  .min(1, 'password must not be empty')
  .max(1024, 'password: at most 1024 characters')
  .refine(
    (s) => !/[\x00-\x1f\x7f]/.test(s),
    'password must not contain control characters (line breaks, tabs, NUL, ^C …)',
  );

const realmOf = (name: string): string | undefined => {
  const at = name.indexOf('@');
  return at < 0 ? undefined : name.slice(at + 1);
};

/**
 * POST /kerberos/ticket/obtain. Two ways to log in, told apart by the fields present:
 * - `username` + `password`: kinit for `username@realm`, the password typed at its prompt;
 * - neither: kinit from a keytab (`path`, default the configured keytab; `principal` optional).
 * Mixing them is refused rather than silently ignoring half of the request.
 */
export const obtainBody = z
  .object({
    realm: realmName
      .optional()
      .describe('realm (usually upper case, e.g. EXAMPLE.TEST); default: default_realm of krb5.conf'),
    username: username.optional(),
    password: password.optional(),
    path: keytabPath.optional(),
    principal: principal.optional(),
  })
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (b.username !== undefined && b.password === undefined) issue('password', 'password is required with username');
    if (b.password !== undefined && b.username === undefined) issue('username', 'username is required with password');
    const withPassword = b.username !== undefined || b.password !== undefined;
    if (withPassword) {
      if (b.path !== undefined) issue('path', 'path is for a keytab login; do not send it with username/password');
      if (b.principal !== undefined)
        issue('principal', 'principal is for a keytab login; do not send it with username/password');
      return;
    }
    if (b.principal === undefined) {
      // Without a principal kinit picks host/<fqdn> and its realm by itself; a realm here could
      // not be honoured.
      if (b.realm !== undefined) issue('realm', 'a keytab login with realm needs principal too');
      return;
    }
    const own = realmOf(b.principal);
    if (own !== undefined && b.realm !== undefined && own !== b.realm)
      issue('realm', `differs from the principal's realm ${own}`);
  });
export type ObtainBody = z.output<typeof obtainBody>;

export const keyListBody = z.object({ path: keytabPath.optional() });

export const confUpdateBody = z.object({ conf: z.string().min(1, 'conf: the full text of krb5.conf') });

/** A realm file's content: its raw text, or an object rendered to krb5.conf syntax. */
const realmConf = z.union([z.string(), krb5ConfInput], {
  error: 'krb5.conf text, or an object of sections whose values are strings, lists of strings or nested objects',
});
export const realmCreateBody = z.object({ name: realmFileName, conf: realmConf });
export const realmUpdateBody = z.object({ conf: realmConf });
export const realmNameParams = z.object({ name: realmFileName });
