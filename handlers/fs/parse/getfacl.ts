/**
 * getfacl and setfacl --test output (acl 2.3.1, Debian 12), run under LC_ALL=C.
 *
 * getfacl (long form, the only form we parse; `-t` tabular output is refused):
 *   # file: <name>        names escaped: `\ooo` octal for newline etc., `\\` for a backslash;
 *   # owner: <name>       space, TAB and UTF-8 are printed raw
 *   # group: <name>
 *   # flags: -st          only when setuid/setgid/sticky is set
 *   [default:]<tag>:<qualifier>:<perms>[<TAB or spaces>#effective:<perms>]
 *   <blank line after every file>
 *   `-c` drops the header lines; `-R` gives one block per file; `-R` on an absolute path
 *   strips the leading `/` (and says so on stderr, which is not parsed here).
 *
 * setfacl --test: one record per file, `<path>: <access>,<default>` where each side is `*`
 *   (not shown / unchanged) or short entries (`u::rwx,u:nobody:rwx,g::r-x,m::rwx,o::r-x`, the
 *   default side prefixed `d:`; after `-k` or `-b` the default side is empty: `share: *,`, or
 *   `share: u::rwx,g::r-x,o::r-x,` when the access ACL changed as well). The path is NOT escaped:
 *   a newline in a file name splits the record over two lines, which is why parseSetfaclTest can
 *   take the root it was run on.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { isUnder } from '../../core/paths';

// ---- output shapes (the fixture table checks every parse against them) ----

/** Always the three-character form getfacl prints (`rw-`), never octal. */
export const aclPerms = z.string().regex(/^[r-][w-][x-]$/);

export const aclTag = z.enum(['user', 'group', 'mask', 'other']);
export type AclTag = z.infer<typeof aclTag>;

export const aclEntry = z.object({
  /** `default` for `default:` / `d:` entries (inherited by new files in a directory) */
  scope: z.enum(['access', 'default']),
  tag: aclTag,
  /** user/group name or numeric id; null for the owner, owning group, mask and other */
  qualifier: z.string().nullable(),
  perms: aclPerms,
  /** getfacl's `#effective:` comment, present only when getfacl printed it */
  effective: aclPerms.optional(),
});
export type AclEntry = z.infer<typeof aclEntry>;

/** One `# file:` block of getfacl output. Header fields are null when `-c` omitted them. */
export const getfaclFile = z.object({
  /** unescaped (`\012` → newline, `\\` → `\`); relative when getfacl stripped the leading `/` */
  file: z.string().nullable(),
  owner: z.string().nullable(),
  group: z.string().nullable(),
  flags: z.object({ setuid: z.boolean(), setgid: z.boolean(), sticky: z.boolean() }),
  entries: z.array(aclEntry),
});
export type GetfaclFile = z.infer<typeof getfaclFile>;

/** One line (record) of `setfacl --test` output. null = `*` (that ACL is not shown/unchanged). */
export const setfaclTestRecord = z.object({
  path: z.string(),
  access: z.array(aclEntry).nullable(),
  defaults: z.array(aclEntry).nullable(),
});
export type SetfaclTestRecord = z.infer<typeof setfaclTestRecord>;

/** What a setfacl failure on stderr means, so a route can answer 400 (bad entry) vs 404/500. */
export const setfaclError = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('invalid-argument'),
    option: z.string(),
    /** 1-based character position in the option's argument where setfacl gave up */
    character: z.number().int().positive(),
  }),
  z.object({ kind: z.literal('incomplete'), option: z.string() }),
  z.object({ kind: z.literal('file'), path: z.string(), message: z.string() }),
  z.object({ kind: z.literal('other'), message: z.string() }),
]);
export type SetfaclError = z.infer<typeof setfaclError>;

const GETFACL = 'getfacl';
const SETFACL = 'setfacl --test';

/**
 * Undo getfacl's name quoting: `\\` → `\` and `\ooo` → the byte ooo. The bytes are decoded
 * as UTF-8 afterwards because a multi-byte character may have been escaped byte by byte.
 */
export function unescapeAclName(text: string, parser = GETFACL, line?: number): string {
  if (!text.includes('\\')) return text;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '\\') {
      // copy the (possibly multi-unit) character as UTF-8
      const cp = text.codePointAt(i) as number;
      const ch = String.fromCodePoint(cp);
      bytes.push(...enc.encode(ch));
      i += ch.length - 1;
      continue;
    }
    if (text[i + 1] === '\\') {
      bytes.push(0x5c);
      i++;
      continue;
    }
    const oct = /^[0-7]{3}/.exec(text.slice(i + 1, i + 4));
    if (!oct) throw new ParseError(parser, 'invalid escape in name (expected \\\\ or \\ooo)', line);
    const value = parseInt(oct[0], 8);
    if (value > 0xff) throw new ParseError(parser, 'octal escape out of range', line);
    bytes.push(value);
    i += 3;
  }
  return new TextDecoder('utf-8').decode(new Uint8Array(bytes));
}

const PERMS = /^[r-][w-][x-]$/;
const LONG_TAGS: Record<string, AclTag> = { user: 'user', group: 'group', mask: 'mask', other: 'other' };
const SHORT_TAGS: Record<string, AclTag> = { u: 'user', g: 'group', m: 'mask', o: 'other' };

/**
 * `<tag>:<qualifier>:<perms>`, split from both ends so that a qualifier holding `:` (possible
 * for odd names; getfacl does not escape it) stays whole.
 */
function parseEntryBody(
  body: string,
  tags: Record<string, AclTag>,
  scope: AclEntry['scope'],
  parser: string,
  line: number | undefined,
): AclEntry {
  const first = body.indexOf(':');
  const last = body.lastIndexOf(':');
  if (first < 0 || first === last) throw new ParseError(parser, 'ACL entry must be <tag>:<qualifier>:<perms>', line);
  const tag = tags[body.slice(0, first)];
  if (!tag) throw new ParseError(parser, `unknown ACL tag "${body.slice(0, first)}"`, line);
  const rawQualifier = body.slice(first + 1, last);
  const perms = body.slice(last + 1);
  if (!PERMS.test(perms)) throw new ParseError(parser, `bad permissions "${perms}"`, line);
  if ((tag === 'mask' || tag === 'other') && rawQualifier !== '') {
    throw new ParseError(parser, `${tag} entry with a qualifier`, line);
  }
  const qualifier = rawQualifier === '' ? null : unescapeAclName(rawQualifier, parser, line);
  return { scope, tag, qualifier, perms };
}

// lazy body: stops where an optional `#effective:` comment (after TABs or spaces) begins
const ENTRY_LINE = /^(default:)?(.+?)(?:[\t ]+#effective:([r-][w-][x-]))?$/;
const HEADER = /^# (file|owner|group|flags): (.*)$/;

function emptyBlock(): GetfaclFile {
  return { file: null, owner: null, group: null, flags: { setuid: false, setgid: false, sticky: false }, entries: [] };
}

/** Parse getfacl's long output (one block per file; `-c`, `-e`, `-n`, `-R`, `-p` all fine). */
export function parseGetfacl(stdout: string): GetfaclFile[] {
  if (stdout === '') return [];
  if (!stdout.endsWith('\n')) {
    throw new ParseError(GETFACL, 'output ends without a newline (truncated?)', stdout.split('\n').length);
  }
  const lines = stdout.slice(0, -1).split('\n');
  const files: GetfaclFile[] = [];
  let block: GetfaclFile | null = null;
  let blockStart = 0;

  const finish = () => {
    if (!block) return;
    requireBaseEntries(block, blockStart);
    files.push(block);
    block = null;
  };

  lines.forEach((line, i) => {
    const n = i + 1;
    if (line === '') {
      finish();
      return;
    }
    const header = HEADER.exec(line);
    if (header) {
      const [, key, value] = header;
      if (key === 'file') {
        finish();
        block = emptyBlock();
        blockStart = n;
        block.file = unescapeAclName(value, GETFACL, n);
        return;
      }
      if (!block || block.entries.length > 0) {
        throw new ParseError(GETFACL, `"# ${key}:" outside a file header`, n);
      }
      if (key === 'owner') block.owner = unescapeAclName(value, GETFACL, n);
      else if (key === 'group') block.group = unescapeAclName(value, GETFACL, n);
      else {
        const f = /^([s-])([s-])([t-])$/.exec(value);
        if (!f) throw new ParseError(GETFACL, `bad flags "${value}"`, n);
        block.flags = { setuid: f[1] === 's', setgid: f[2] === 's', sticky: f[3] === 't' };
      }
      return;
    }
    if (line.startsWith('#')) throw new ParseError(GETFACL, 'unknown comment line', n);
    const m = ENTRY_LINE.exec(line);
    if (!m) throw new ParseError(GETFACL, 'not an ACL entry line (tabular -t output is not supported)', n);
    if (!block) {
      block = emptyBlock(); // -c: entries without a header
      blockStart = n;
    }
    const entry = parseEntryBody(m[2], LONG_TAGS, m[1] ? 'default' : 'access', GETFACL, n);
    if (m[3]) entry.effective = m[3];
    block.entries.push(entry);
  });
  finish();
  return files;
}

/** Every ACL has user::, group:: and other::; a block without them was cut or is not getfacl's. */
function requireBaseEntries(block: GetfaclFile, line: number): void {
  for (const tag of ['user', 'group', 'other'] as const) {
    if (!block.entries.some((e) => e.scope === 'access' && e.tag === tag && e.qualifier === null)) {
      throw new ParseError(GETFACL, `block has no ${tag}:: entry (truncated?)`, line);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// setfacl --test
// ---------------------------------------------------------------------------------------------

/** `<access>,<default>` of one record; null when the text is not a valid ACL pair. */
function parseTestAcls(text: string, line: number): Pick<SetfaclTestRecord, 'access' | 'defaults'> | null {
  const tokens = text.split(',');
  let i = 0;
  let access: AclEntry[] | null;
  if (tokens[0] === '*') {
    access = null;
    i = 1;
  } else {
    access = [];
    // the access side ends at `*`, at the first `d:` entry, or at the empty default side that
    // -b/-k leave behind (`share: u::rwx,g::r-x,o::r-x,`: the access ACL changed too)
    while (i < tokens.length && tokens[i] !== '*' && tokens[i] !== '' && !tokens[i].startsWith('d:')) {
      const e = tryEntry(tokens[i], 'access', line);
      if (!e) return null;
      access.push(e);
      i++;
    }
    if (access.length === 0) return null;
  }
  let defaults: AclEntry[] | null;
  if (tokens[i] === '*' && i === tokens.length - 1) {
    defaults = null;
  } else if (tokens[i] === '' && i === tokens.length - 1) {
    // `share: *,` after `-k` (`share: u::…,` after `-b`): the default ACL is now empty (removed),
    // which is not "unchanged"
    defaults = [];
  } else {
    defaults = [];
    for (; i < tokens.length; i++) {
      if (!tokens[i].startsWith('d:')) return null;
      const e = tryEntry(tokens[i].slice(2), 'default', line);
      if (!e) return null;
      defaults.push(e);
    }
    if (defaults.length === 0) return null;
  }
  return { access, defaults };
}

function tryEntry(token: string, scope: AclEntry['scope'], line: number): AclEntry | null {
  try {
    return parseEntryBody(token, SHORT_TAGS, scope, SETFACL, line);
  } catch {
    return null;
  }
}

export interface ParseSetfaclTestOptions {
  /**
   * The path setfacl was run on (as given on its command line). Every record's path is then
   * required to be it or below it, which lets a raw newline in a file name be told apart from
   * garbage: a line that does not start with the root continues the previous path.
   */
  root?: string;
}

/**
 * Parse `setfacl --test` stdout. A record's path ends at the last `: ` of its line after which
 * a valid ACL pair follows, so paths holding `: ` are fine. Lines that are not a complete
 * record are joined with the next line (a newline in the file name).
 */
export function parseSetfaclTest(stdout: string, options: ParseSetfaclTestOptions = {}): SetfaclTestRecord[] {
  if (stdout === '') return [];
  if (!stdout.endsWith('\n')) {
    throw new ParseError(SETFACL, 'output ends without a newline (truncated?)', stdout.split('\n').length);
  }
  const { root } = options;
  const underRoot = (p: string) => root === undefined || isUnder(p, root);
  // a record's first line starts with the root followed by `/` (a file below it) or `: `
  const startsRecord = (line: string) =>
    root === undefined ||
    (line.startsWith(root) &&
      (root.endsWith('/') ||
        line.length === root.length ||
        line[root.length] === '/' ||
        line.startsWith(': ', root.length)));
  const lines = stdout.slice(0, -1).split('\n');
  const out: SetfaclTestRecord[] = [];
  let pending: string[] = [];
  let pendingStart = 0;

  lines.forEach((line, i) => {
    const n = i + 1;
    if (pending.length === 0) {
      pendingStart = n;
      if (!startsRecord(line)) {
        throw new ParseError(SETFACL, `record does not start with the path given (${JSON.stringify(root)})`, n);
      }
    }
    const sep = line.lastIndexOf(': ');
    if (sep >= 0) {
      const acls = parseTestAcls(line.slice(sep + 2), n);
      if (acls) {
        const path = [...pending, line.slice(0, sep)].join('\n');
        if (!underRoot(path)) throw new ParseError(SETFACL, 'record path is outside the path given', pendingStart);
        out.push({ path, ...acls });
        pending = [];
        return;
      }
    }
    pending.push(line);
  });
  if (pending.length > 0) {
    throw new ParseError(SETFACL, 'not a "<path>: <acl>,<default acl>" record', pendingStart);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// setfacl errors
// ---------------------------------------------------------------------------------------------

const ERR_INVALID = /^setfacl: Option (-[A-Za-z]|--[a-z-]+): Invalid argument near character (\d+)$/;
const ERR_INCOMPLETE = /^setfacl: Option (-[A-Za-z]|--[a-z-]+) incomplete$/;
// the ACL text inside this message is quoted with ` and ' and holds `: `, so match it first
const ERR_MALFORMED = /^setfacl: (.*?): (Malformed (?:access|default) ACL .*)$/;
const ERR_FILE = /^setfacl: (.*): ([^:]+)$/;

/**
 * Classify setfacl's stderr lines so a route can answer precisely: `invalid-argument` /
 * `incomplete` mean the entry text (400; `character` points into the `-m` argument),
 * `file` means the path (e.g. `No such file or directory`, `Operation not supported`).
 */
export function parseSetfaclErrors(stderr: string): SetfaclError[] {
  const out: SetfaclError[] = [];
  for (const line of stderr.split('\n')) {
    if (line.trim() === '') continue;
    let m: RegExpExecArray | null;
    if ((m = ERR_INVALID.exec(line))) out.push({ kind: 'invalid-argument', option: m[1], character: Number(m[2]) });
    else if ((m = ERR_INCOMPLETE.exec(line))) out.push({ kind: 'incomplete', option: m[1] });
    else if ((m = ERR_MALFORMED.exec(line))) out.push({ kind: 'file', path: m[1], message: m[2] });
    else if ((m = ERR_FILE.exec(line))) out.push({ kind: 'file', path: m[1], message: m[2] });
    else out.push({ kind: 'other', message: line });
  }
  return out;
}
