/**
 * Parser for MIT krb5.conf / kdc.conf / krb5.conf.d files (the "profile" format).
 *
 * Follows MIT's own parser (src/util/profile/prof_parse.c, krb5 1.20 as shipped in Debian 12):
 * - Comments: whole lines whose first non-blank character is `#` or `;`. There are no end-of-line
 *   comments: `kdc = h # x` has the value `h # x`.
 * - `[name]` starts a section, `[name]*` a final one. A repeated section header continues the
 *   same section (MIT merges them).
 * - `tag = value` is a relation; the tag is one word, `tag* = value` marks it final (1.20 strips
 *   the `*` and reads the relation, checked on this machine; the flag only has an effect from 1.22
 *   on, but it is kept so a round trip does not lose it). The value
 *   is the rest of the line with trailing blanks cut, or a double-quoted string with the escapes
 *   `\n \t \b` and `\<any>` for that character.
 * - `tag = {` opens a subsection, closed by `}` (or `}*`: final). `tag =` with nothing after it
 *   expects the `{` alone on the very next line (MIT rejects anything else there). Subsections
 *   with the same tag are merged, as MIT's profile_add_node does.
 * - Directives in column 1: `include PATH` and `includedir PATH` anywhere; `module PATH:RESIDUAL`
 *   only before the first section.
 * - Lines end in `\n`; trailing `\r` are dropped as MIT's strip_line does.
 *
 * Where MIT silently accepts something that almost always is a mistake, this parser refuses it
 * with a ParseError naming the line, because the API must not show a config as valid JSON
 * while the library reads something else from it:
 * - text before the first section (MIT skips it: a misplaced relation would be lost);
 * - an indented `[section]` before the first section (MIT skips it, and everything up to the
 *   next column-1 header with it);
 * - a subsection still open at end of file, a `tag =` at end of file;
 * - junk after a closing quote, after `}` / `}*`, after `{` on its own line; an unterminated
 *   quote or a backslash at the end of a quoted value;
 * - `*` inside a tag (MIT cuts the tag there), whitespace or control characters in a section
 *   name, an empty section name;
 * - NUL and other control characters except tab (a quoted value may still hold `\n`, `\t`,
 *   `\b` escapes); lines longer than MIT's 2048-byte line buffer (MIT would split them).
 *
 * Pure: no I/O. include/includedir are recorded, not followed.
 * The JSON shape (krb5Conf) is described below.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

// ---------------------------------------------------------------------------------------------
// The parsed form, krb5Conf (the grammar is above; render/krb5-conf.ts is the way back):
//   {
//     directives: [{ type: 'includedir', path: '/etc/krb5.conf.d/' }, …],
//     sections: { libdefaults: { default_realm: 'EXAMPLE.TEST' },
//                 realms: { 'EXAMPLE.TEST': { kdc: ['kdc1:88', 'kdc2'], admin_server: 'kdc1' } } },
//     finals: [['realms', 'EXAMPLE.TEST']],
//   }
// - A tag seen once is a string; a tag seen several times is an array in file order; a
//   subsection (`tag = { … }`) is an object. Subsections with the same tag are merged, as MIT's
//   profile library merges them. A tag with both values and a subsection is an array holding
//   the strings and the one object.
// - Tags that MIT documents as lists are always arrays, even with one value, so a client can rely
//   on `realms.<R>.kdc` being an array: see KRB5_LIST_TAGS.
// - `finals` lists the paths carrying MIT's final marker (`[sect]*`, `tag* = {`, `}*`, `tag* = v`),
//   sorted, without duplicates. It is a set; order carries no meaning.
// - `directives`: `include`/`includedir` (any place in the file, column 1) and `module` (before
//   the first section). `section` names the top-level section the directive appeared in; absent
//   means before the first section. Rendering puts a directive at the end of its section.
// - Comments and layout are not kept; routes keep the raw text next to the JSON for that.

export type Krb5Value = string | Krb5Section;
export type Krb5Entry = Krb5Value | Krb5Value[];
export interface Krb5Section {
  [tag: string]: Krb5Entry;
}

export const krb5Section: z.ZodType<Krb5Section> = z.lazy(() =>
  z.record(z.string(), z.union([z.string(), krb5Section, z.array(z.union([z.string(), krb5Section]))])),
);

// Strict: a client's `{type: 'module', …, section}` must be refused, not silently trimmed.
export const krb5Directive = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('include'), path: z.string().min(1), section: z.string().min(1).optional() }),
  z.strictObject({ type: z.literal('includedir'), path: z.string().min(1), section: z.string().min(1).optional() }),
  /** `module PATH:RESIDUAL`: MIT then loads the profile from that module and ignores the file's relations. */
  z.strictObject({ type: z.literal('module'), path: z.string().min(1), residual: z.string() }),
]);
export type Krb5Directive = z.infer<typeof krb5Directive>;

export const krb5Conf = z.object({
  directives: z.array(krb5Directive),
  sections: z.record(z.string(), krb5Section),
  finals: z.array(z.array(z.string()).min(1)),
});
export type Krb5Conf = z.infer<typeof krb5Conf>;

/**
 * Tags that hold a list, by position `realms.<REALM>.<tag>` and `plugins.<interface>.<tag>`; the
 * parser always makes these arrays. From MIT's krb5_conf.rst / pkinit docs: `kdc` (one line per
 * KDC), `master_kdc` / `primary_kdc` ("the primary KDC(s)"), `auth_to_local` (rules tried in
 * order), `http_anchors` and the `pkinit_*` locations ("may be specified multiple times"), and
 * plugin `module` / `enable_only` / `disable` ("may have multiple values"). `kpasswd_server` is
 * not called a list there, but the library locates it like `kdc`, trying every value.
 * `admin_server` is single-valued (kadmin uses the first).
 */
export const KRB5_LIST_TAGS: Readonly<Record<string, readonly string[]>> = {
  realms: [
    'kdc',
    'master_kdc',
    'primary_kdc',
    'kpasswd_server',
    'auth_to_local',
    'http_anchors',
    'pkinit_anchors',
    'pkinit_pool',
    'pkinit_revoke',
    'pkinit_identities',
  ],
  plugins: ['module', 'enable_only', 'disable'],
};

const PARSER = 'krb5.conf';

/** fgets(bptr, 2048, f): a line plus its newline must fit in 2047 bytes. */
export const KRB5_MAX_LINE_BYTES = 2046;

// C isspace() in the C locale. JS \s would also match Unicode spaces, which MIT does not skip.
const BLANK = ' \t\n\v\f\r';
const isBlank = (c: string | undefined): boolean => c !== undefined && c !== '' && BLANK.includes(c);
const skipBlanks = (s: string): string => {
  let i = 0;
  while (i < s.length && isBlank(s[i])) i++;
  return s.slice(i);
};
const trimBlanksEnd = (s: string): string => {
  let j = s.length;
  while (j > 0 && isBlank(s[j - 1])) j--;
  return s.slice(0, j);
};

const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * A tag: one word without blanks, `=` or `*`; it cannot start with a character that would make
 * the line a comment, a section header or a closing brace. Shared with the renderer so that
 * everything the parser accepts can be written back.
 */
export function krb5TagProblem(tag: string): string | undefined {
  if (tag === '') return 'empty tag';
  if (CONTROL.test(tag)) return 'control character in tag';
  if (/[ \t\n\v\f\r]/.test(tag)) return 'whitespace in tag';
  if (tag.includes('=')) return "'=' in tag";
  if (tag.includes('*')) return "'*' in tag (MIT reads it as the final marker and cuts the tag there)";
  if ('#;[}'.includes(tag[0])) return `tag starts with '${tag[0]}'`;
  return undefined;
}

/** A section name: what stands between `[` and `]`. */
export function krb5SectionNameProblem(name: string): string | undefined {
  if (name === '') return 'empty section name';
  if (CONTROL.test(name)) return 'control character in section name';
  if (/[ \t\n\v\f\r]/.test(name)) return 'whitespace in section name';
  if (name.includes(']')) return "']' in section name";
  return undefined;
}

const utf8 = new TextEncoder();

/** Own-property helpers: tags such as `__proto__` or `constructor` must stay plain data. */
export function getOwn(obj: Krb5Section, key: string): Krb5Entry | undefined {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** True when MIT documents `tag` at this path as a list (see KRB5_LIST_TAGS). */
export function isKrb5ListTag(path: readonly string[]): boolean {
  // realms.<REALM>.<tag>, plugins.<interface>.<tag>
  if (path.length !== 3) return false;
  if (!Object.prototype.hasOwnProperty.call(KRB5_LIST_TAGS, path[0])) return false;
  return KRB5_LIST_TAGS[path[0]].includes(path[2]);
}

function addValue(node: Krb5Section, tag: string, value: string, path: readonly string[]): void {
  const cur = getOwn(node, tag);
  if (cur === undefined) setOwn<Krb5Entry>(node, tag, isKrb5ListTag(path) ? [value] : value);
  else if (Array.isArray(cur)) cur.push(value);
  else setOwn<Krb5Entry>(node, tag, [cur, value]);
}

/** The subsection `tag` of `node`, created if missing, merged with an existing one if present. */
function subsection(node: Krb5Section, tag: string): Krb5Section {
  const cur = getOwn(node, tag);
  if (cur === undefined) {
    const fresh: Krb5Section = {};
    setOwn<Krb5Entry>(node, tag, fresh);
    return fresh;
  }
  if (typeof cur === 'object' && !Array.isArray(cur)) return cur;
  const list: Krb5Value[] = Array.isArray(cur) ? cur : [cur];
  const existing = list.find((v): v is Krb5Section => typeof v === 'object');
  if (existing) return existing;
  const fresh: Krb5Section = {};
  list.push(fresh);
  setOwn<Krb5Entry>(node, tag, list);
  return fresh;
}

function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

/** Sorted, duplicate-free copy of a finals list (the canonical form the parser emits). */
export function canonicalFinals(finals: readonly (readonly string[])[]): string[][] {
  const seen = new Map<string, string[]>();
  for (const p of finals) seen.set(JSON.stringify(p), [...p]);
  return [...seen.values()].sort(comparePaths);
}

/** Reads a double-quoted value starting after the opening quote; returns the decoded string. */
function parseQuoted(rest: string, lineNo: number): string {
  let out = '';
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (c === '"') {
      if (skipBlanks(rest.slice(i + 1)) !== '') {
        throw new ParseError(PARSER, 'text after the closing quote (MIT would silently drop it)', lineNo);
      }
      return out;
    }
    if (c === '\\') {
      i++;
      if (i >= rest.length) throw new ParseError(PARSER, 'backslash at the end of a quoted value', lineNo);
      const e = rest[i];
      out += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'b' ? '\b' : e;
      continue;
    }
    out += c;
  }
  throw new ParseError(PARSER, 'unterminated quoted value', lineNo);
}

interface Open {
  node: Krb5Section;
  path: string[];
  line: number;
}

/**
 * What the parser read on one line, for callers that must name the line a rule refuses (the
 * write policies of ../conf-policy.ts). `path` is the section and the subsection tags the line
 * sits in; a subsection is reported at the line of its tag.
 */
export type Krb5LineEvent =
  | { type: 'section'; name: string; line: number }
  | { type: 'relation'; path: readonly string[]; tag: string; value: string; line: number }
  | { type: 'subsection'; path: readonly string[]; tag: string; line: number }
  | { type: 'directive'; directive: Krb5Directive; line: number };

export function parseKrb5Conf(text: string, onLine?: (e: Krb5LineEvent) => void): Krb5Conf {
  const sections: Record<string, Krb5Section> = {};
  const directives: Krb5Directive[] = [];
  const finals: string[][] = [];

  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();

  let section: { name: string; node: Krb5Section } | undefined;
  const stack: Open[] = [];
  /** `tag =` seen, `{` expected on the next line. */
  let pending: { tag: string; final: boolean; line: number } | undefined;

  const current = (): { node: Krb5Section; path: string[] } => {
    const top = stack[stack.length - 1];
    if (top) return top;
    if (!section) throw new Error('unreachable: no section');
    return { node: section.node, path: [section.name] };
  };

  const openSubsection = (tag: string, final: boolean, lineNo: number) => {
    const cur = current();
    onLine?.({ type: 'subsection', path: cur.path, tag, line: lineNo });
    const path = [...cur.path, tag];
    stack.push({ node: subsection(cur.node, tag), path, line: lineNo });
    if (final) finals.push(path);
  };

  for (let idx = 0; idx < lines.length; idx++) {
    const lineNo = idx + 1;
    const raw = lines[idx];
    if (utf8.encode(raw).length > KRB5_MAX_LINE_BYTES) {
      throw new ParseError(PARSER, `line longer than ${KRB5_MAX_LINE_BYTES} bytes (MIT would split it)`, lineNo);
    }
    // strip_line(): trailing CR/LF only; other trailing blanks matter (e.g. in include paths).
    let line = raw;
    while (line.endsWith('\r')) line = line.slice(0, -1);
    // Tab is ordinary blank; other control characters only come from damaged or hostile files
    // (and a CR in mid-line would be invisible to a reviewer). Quoted escapes are still fine.
    if (/[\x00-\x08\x0a-\x1f]/.test(line)) throw new ParseError(PARSER, 'control character', lineNo);

    if (pending) {
      // STATE_GET_OBRACE: MIT requires `{` as the first non-blank character of the next line.
      if (skipBlanks(line) !== '{') {
        throw new ParseError(PARSER, `expected '{' alone on the line after '${pending.tag} ='`, lineNo);
      }
      openSubsection(pending.tag, pending.final, pending.line);
      pending = undefined;
      continue;
    }

    // Directives are recognised only in column 1, in any state (prof_parse.c parse_line).
    const directive = /^(include|includedir|module)(?:[ \t\v\f]|$)/.exec(line);
    if (directive && (directive[1] !== 'module' || !section)) {
      const arg = skipBlanks(line.slice(directive[1].length));
      if (arg === '') throw new ParseError(PARSER, `${directive[1]} without an argument`, lineNo);
      if (directive[1] === 'module') {
        // prof_init.c parse_modspec: split at the first ':'; no ':' is PROF_MODULE_SYNTAX.
        const colon = arg.indexOf(':');
        if (colon <= 0) throw new ParseError(PARSER, "module directive must be 'module PATH:RESIDUAL'", lineNo);
        directives.push({ type: 'module', path: arg.slice(0, colon), residual: arg.slice(colon + 1) });
      } else {
        const type = directive[1] === 'include' ? 'include' : 'includedir';
        directives.push(section ? { type, path: arg, section: section.name } : { type, path: arg });
      }
      onLine?.({ type: 'directive', directive: directives[directives.length - 1], line: lineNo });
      continue;
    }

    const cp = skipBlanks(line);
    if (cp === '' || cp[0] === '#' || cp[0] === ';') continue;

    if (!section) {
      // STATE_INIT_COMMENT: MIT ignores every line until one starts with '[' in column 1.
      if (line[0] !== '[') {
        if (cp[0] === '[') {
          throw new ParseError(
            PARSER,
            'the first section header must start in column 1 (MIT ignores an indented one)',
            lineNo,
          );
        }
        throw new ParseError(
          PARSER,
          cp.includes('=') ? 'relation outside a section' : 'text before the first section',
          lineNo,
        );
      }
    }

    if (cp[0] === '[') {
      if (stack.length > 0) {
        throw new ParseError(
          PARSER,
          `section header inside the subsection opened at line ${stack[stack.length - 1].line}`,
          lineNo,
        );
      }
      const close = cp.indexOf(']');
      if (close < 0) throw new ParseError(PARSER, "section header without ']'", lineNo);
      const name = cp.slice(1, close);
      const problem = krb5SectionNameProblem(name);
      if (problem) throw new ParseError(PARSER, problem, lineNo);
      let after = cp.slice(close + 1);
      let final = false;
      if (after[0] === '*') {
        final = true;
        after = after.slice(1);
      }
      if (skipBlanks(after) !== '') throw new ParseError(PARSER, 'text after the section header', lineNo);
      let node = Object.prototype.hasOwnProperty.call(sections, name) ? sections[name] : undefined;
      if (!node) {
        node = {};
        setOwn(sections, name, node);
      }
      section = { name, node };
      if (final) finals.push([name]);
      onLine?.({ type: 'section', name, line: lineNo });
      continue;
    }

    if (cp[0] === '}') {
      const top = stack.pop();
      if (!top) throw new ParseError(PARSER, "'}' without an open subsection", lineNo);
      let after = cp.slice(1);
      if (after[0] === '*') {
        finals.push(top.path);
        after = after.slice(1);
      }
      if (skipBlanks(after) !== '') throw new ParseError(PARSER, "text after '}' (MIT would silently drop it)", lineNo);
      continue;
    }

    // A relation: TAG[*] = VALUE
    const eq = cp.indexOf('=');
    if (eq < 0) throw new ParseError(PARSER, "expected 'tag = value', a [section], '}' or a comment", lineNo);
    if (eq === 0) throw new ParseError(PARSER, "relation without a tag before '='", lineNo);
    const left = trimBlanksEnd(cp.slice(0, eq));
    let tag = left;
    let final = false;
    if (tag.endsWith('*')) {
      final = true;
      tag = tag.slice(0, -1);
    }
    const tagProblem = /[ \t\n\v\f\r]/.test(left) ? "more than one word before '='" : krb5TagProblem(tag);
    if (tagProblem) throw new ParseError(PARSER, tagProblem, lineNo);

    const value = skipBlanks(cp.slice(eq + 1));
    if (value === '') {
      pending = { tag, final, line: lineNo };
      continue;
    }
    if (value[0] === '{' && skipBlanks(value.slice(1)) === '') {
      openSubsection(tag, final, lineNo);
      continue;
    }
    const cur = current();
    const decoded = value[0] === '"' ? parseQuoted(value.slice(1), lineNo) : trimBlanksEnd(value);
    addValue(cur.node, tag, decoded, [...cur.path, tag]);
    if (final) finals.push([...cur.path, tag]);
    onLine?.({ type: 'relation', path: cur.path, tag, value: decoded, line: lineNo });
  }

  if (pending) throw new ParseError(PARSER, `'${pending.tag} =' at end of file without '{'`, pending.line);
  const open = stack[stack.length - 1];
  if (open) throw new ParseError(PARSER, `subsection '${open.path[open.path.length - 1]}' is never closed`, open.line);

  return { directives, sections, finals: canonicalFinals(finals) };
}
