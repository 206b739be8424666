/**
 * Validation of one POSIX ACL entry as `setfacl -m` / `setfacl -x` accept it (acl 2.3.1,
 * setfacl(1)), narrowed to a safe subset:
 *
 *   [d[efault]:] u[ser]:<qualifier>:<perms>     qualifier empty = the owning user
 *   [d[efault]:] g[roup]:<qualifier>:<perms>    qualifier empty = the owning group
 *   [d[efault]:] m[ask][:]:<perms>
 *   [d[efault]:] o[ther][:]:<perms>
 *   [d[efault]:] <qualifier>:<perms>            bare form = user (setfacl's `[u[ser]:]uid`)
 *
 *   qualifier  a user/group name matching SAFE_NAME, or a numeric id 0..4294967294
 *   perms      1-4 of r w x X -, each letter at most once (setfacl rejects `rr`), or one octal digit
 *
 * Why so strict: the route passes each entry as the argument of `-m`/`-x` (argv, no shell),
 * but setfacl itself splits its argument on `,` and newlines, so a `,` would smuggle a second
 * entry, and names with escapes, spaces or a leading `-` are either lookups of odd accounts or
 * confusing in logs. Everything accepted here starts with a letter or digit, never with `-`,
 * and holds no `,`, whitespace, backslash or control character. Names outside SAFE_NAME (e.g.
 * `DOMAIN\user`) can still be given by numeric id.
 *
 * The result carries a canonical text (`user:nobody:rwx`, `default:mask::r-x`) which is what
 * the route should hand to setfacl, so the accepted meaning and the executed meaning are one.
 * Octal perms and `X` are kept as given in the canonical text (X is only meaningful to setfacl).
 */
import * as z from 'zod';
import type { AclTag } from './parse/getfacl';

/**
 * Letters, digits, `_ . @ -`, first character a letter or `_`, at most 64 characters, with an
 * optional trailing `$` (Samba machine accounts). Covers Debian's NAME_REGEX and the usual
 * directory-service forms (`john.doe`, `svc-backup`, `user@realm`).
 */
export const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_.@-]{0,63}\$?$/;
/** uid/gid; 4294967295 is (uid_t)-1 and setfacl refuses it ("Malformed access ACL"). */
const NUMERIC_ID = /^(?:0|[1-9][0-9]{0,9})$/;
const MAX_ID = 4294967294;
const PERMS = /^(?:[rwxX-]{1,4}|[0-7])$/;
/** generous bound: "default:" + "group:" + 65-char name + ":" + 4 perms */
export const MAX_ACL_ENTRY_LENGTH = 96;

const TAGS: Record<string, AclTag> = {
  u: 'user',
  user: 'user',
  g: 'group',
  group: 'group',
  m: 'mask',
  mask: 'mask',
  o: 'other',
  other: 'other',
};
/** words setfacl reads as tags or the default prefix; never accepted as a bare qualifier */
const KEYWORDS = new Set([...Object.keys(TAGS), 'd', 'default']);

export type AclEntryMode = 'modify' | 'remove';

export interface ValidAclEntry {
  scope: 'access' | 'default';
  tag: AclTag;
  /** null for the owning user/group, mask and other */
  qualifier: string | null;
  /** as given (e.g. `rw`, `rwX`, `6`); null in remove mode */
  perms: string | null;
  /** what to pass to setfacl */
  canonical: string;
}

export type AclEntryCheck = { ok: true; entry: ValidAclEntry } | { ok: false; message: string };

function validQualifier(q: string): boolean {
  if (NUMERIC_ID.test(q)) return Number(q) <= MAX_ID;
  return SAFE_NAME.test(q);
}

function validPerms(p: string): boolean {
  if (!PERMS.test(p)) return false;
  const letters = p.replace(/-/g, '');
  return new Set(letters).size === letters.length;
}

/**
 * Check one entry. `modify` (setfacl -m / --set) needs perms; `remove` (setfacl -x) forbids
 * them. Messages quote the entry with JSON.stringify so control characters are visible.
 */
export function checkAclEntry(text: string, mode: AclEntryMode = 'modify'): AclEntryCheck {
  const shown = JSON.stringify(text);
  const fail = (why: string): AclEntryCheck => ({ ok: false, message: `ACL entry ${shown}: ${why}` });
  if (typeof text !== 'string' || text.length === 0) return fail('is empty');
  if (text.length > MAX_ACL_ENTRY_LENGTH) return fail(`is longer than ${MAX_ACL_ENTRY_LENGTH} characters`);
  // Checked first so the message names the real problem rather than a grammar mismatch.
  if (text.startsWith('-')) return fail('must not start with "-"');
  if (text.includes(',')) return fail('must be a single entry (no ",")');
  if (/[\s\\\x00-\x1f\x7f]/.test(text)) return fail('must not contain whitespace, backslashes or control characters');

  let rest = text;
  let scope: 'access' | 'default' = 'access';
  const def = /^(?:d|default):/.exec(rest);
  if (def) {
    scope = 'default';
    rest = rest.slice(def[0].length);
  }
  const parts = rest.split(':');
  const head = parts[0];
  const tag = TAGS[head];

  let qualifier: string | null;
  let perms: string | null;
  let resolvedTag: AclTag;

  if (tag === 'user' || tag === 'group') {
    // u:<q>:<perms>  |  u:<q> (remove)
    if (parts.length !== 3 && parts.length !== 2) return fail('expected "<tag>:<name or id>:<perms>"');
    const q = parts[1];
    if (q !== '' && !validQualifier(q)) return fail(`"${q}" is not an allowed user/group name or numeric id`);
    qualifier = q === '' ? null : q;
    perms = parts.length === 3 ? parts[2] : null;
    resolvedTag = tag;
  } else if (tag === 'mask' || tag === 'other') {
    // m::<perms> | m:<perms> | m | m: | m:: (the last three for remove)
    if (parts.length > 3) return fail('too many ":"');
    if (parts.length === 3 && parts[1] !== '') return fail(`${tag} entries take no name`);
    perms = parts.length === 3 ? parts[2] : parts.length === 2 ? parts[1] : null;
    if (perms === '') perms = null;
    qualifier = null;
    resolvedTag = tag;
  } else {
    // bare form: <q>:<perms> means a user entry
    if (head === '' || KEYWORDS.has(head)) return fail('unknown entry type');
    if (parts.length > 2) return fail(`unknown entry type "${head}"`);
    if (!validQualifier(head)) return fail(`"${head}" is not an allowed user name or numeric id`);
    qualifier = head;
    perms = parts.length === 2 ? parts[1] : null;
    resolvedTag = 'user';
  }

  if (mode === 'modify') {
    if (perms === null || perms === '') return fail('permissions are missing (e.g. "rwx", "r-x" or an octal digit)');
    if (!validPerms(perms))
      return fail(`"${perms}" is not valid: use 1-4 of r, w, x, X, - (each once) or one octal digit`);
  } else {
    if (perms !== null) {
      if (perms !== '') return fail('entries to remove take no permissions');
      perms = null;
    }
    // setfacl answers "Malformed access ACL" for these; say why up front instead
    if (resolvedTag === 'other') return fail('the other entry cannot be removed');
    if (qualifier === null && resolvedTag !== 'mask') return fail(`the owning ${resolvedTag} entry cannot be removed`);
  }

  const prefix = scope === 'default' ? 'default:' : '';
  const canonical =
    `${prefix}${resolvedTag}:${qualifier ?? ''}` +
    (perms === null ? (resolvedTag === 'user' || resolvedTag === 'group' ? '' : ':') : `:${perms}`);
  return { ok: true, entry: { scope, tag: resolvedTag, qualifier, perms, canonical } };
}

/** zod schema for one `setfacl -m` entry (body field `acls[]`); the issue message names the problem. */
export const aclEntryString = z
  .string()
  .max(MAX_ACL_ENTRY_LENGTH)
  .superRefine((value, ctx) => {
    const r = checkAclEntry(value, 'modify');
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  });

/** zod schema for one `setfacl -x` entry (no permissions). */
export const aclRemoveEntryString = z
  .string()
  .max(MAX_ACL_ENTRY_LENGTH)
  .superRefine((value, ctx) => {
    const r = checkAclEntry(value, 'remove');
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  });

/** A list of entries; setfacl gets them joined with `,` as one `-m` argument. */
export const aclEntryList = z.array(aclEntryString).min(1).max(64);

/** Canonical texts of already-validated entries, joined for one `-m`/`-x` argument. */
export function aclArgument(entries: readonly string[], mode: AclEntryMode = 'modify'): string {
  return entries
    .map((e) => {
      const r = checkAclEntry(e, mode);
      if (!r.ok) throw new Error(r.message); // callers validate first; this is a programming error
      return r.entry.canonical;
    })
    .join(',');
}
