/**
 * Debian ifupdown `/etc/network/interfaces` (interfaces(5), ifupdown 0.8.41) → IfupdownFile.
 *
 * Follows ifupdown's own reader (config.c: get_line / read_interfaces_defn) rather than a
 * guess at the format:
 *  - leading whitespace is insignificant; a line whose first non-blank character is `#` is a
 *    comment (only whole-line comments exist: `#` later in a line is data);
 *  - a trailing `\` joins the next physical line, which is appended as it is; trailing
 *    whitespace of the joined line is dropped;
 *  - `iface`, `mapping`, `auto`, `allow-CLASS`, `source`, `source-directory`, `no-auto-down`,
 *    `no-scripts` (and `rename`) start stanzas; any other first word is an option of the
 *    current `iface` (or `script`/`map` of a `mapping`). An option anywhere else, or an option
 *    with an empty value, is an error, as it is for ifup.
 * `source` lines are returned as data and never followed: this module is pure.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

export const ifupdownOption = z.object({
  /** as written (bond-mode and bond_mode both occur; ifupdown maps both to IF_BOND_MODE) */
  name: z.string(),
  value: z.string(),
  /** 1-based physical line where the option starts */
  line: z.number().int(),
});
export type IfupdownOption = z.infer<typeof ifupdownOption>;

export const ifupdownIface = z.object({
  name: z.string(),
  /** inet, inet6, ... ; null only for `iface X inherits Y` without a family */
  family: z.string().nullable(),
  method: z.string().nullable(),
  inherits: z.string().nullable(),
  options: z.array(ifupdownOption),
  line: z.number().int(),
});
export type IfupdownIface = z.infer<typeof ifupdownIface>;

export const ifupdownFile = z.object({
  /** names from `auto` and `allow-auto` lines, in file order, without duplicates */
  auto: z.array(z.string()),
  /** `allow-CLASS` lines other than allow-auto, keyed by CLASS (hotplug, ...) */
  allow: z.record(z.string(), z.array(z.string())),
  ifaces: z.array(ifupdownIface),
  mappings: z.array(
    z.object({
      match: z.array(z.string()),
      script: z.string().nullable(),
      map: z.array(z.string()),
      line: z.number().int(),
    }),
  ),
  /** `source` / `source-directory` directives, returned as data: the caller decides whether to
   *  read them (and must confine the paths); this parser never touches the filesystem */
  sources: z.array(
    z.object({ kind: z.enum(['source', 'source-directory']), path: z.string(), line: z.number().int() }),
  ),
  /** rename, no-auto-down, no-scripts: kept so nothing is silently lost */
  other: z.array(z.object({ keyword: z.string(), args: z.array(z.string()), line: z.number().int() })),
});
export type IfupdownFile = z.infer<typeof ifupdownFile>;

const PARSER = 'ifupdown';

export interface LogicalLine {
  /** 0-based index of the first and last physical line it covers */
  start: number;
  end: number;
  /** leading whitespace stripped, continuations joined, trailing whitespace stripped */
  text: string;
}

/** Physical lines without their terminators (a final newline does not make an extra line). */
export function physicalLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** ifupdown's get_line(): comments and blank lines are not returned. */
export function logicalLines(text: string): LogicalLine[] {
  const phys = physicalLines(text);
  const out: LogicalLine[] = [];
  let i = 0;
  while (i < phys.length) {
    const start = i;
    let cur = (phys[i] ?? '').replace(/^\s+/, '');
    i++;
    if (cur.startsWith('#')) continue;
    while (cur.endsWith('\\') && i <= phys.length) {
      cur = cur.slice(0, -1);
      if (i === phys.length) break; // backslash on the last line: nothing to join
      cur += phys[i] ?? '';
      i++;
    }
    cur = cur.replace(/\s+$/, '');
    if (cur === '') continue;
    out.push({ start, end: i - 1, text: cur });
  }
  return out;
}

function words(s: string): string[] {
  return s.split(/\s+/).filter((w) => w !== '');
}

/** first word and the rest (as ifupdown's next_word: rest keeps its inner whitespace) */
function firstWord(s: string): [string, string] {
  const m = /^(\S+)\s*(.*)$/.exec(s);
  return m ? [m[1] ?? '', m[2] ?? ''] : ['', ''];
}

export const STANZA_KEYWORDS = [
  'iface',
  'mapping',
  'auto',
  'source',
  'source-directory',
  'source-dir',
  'no-auto-down',
  'no-scripts',
  'rename',
];

export function isStanzaKeyword(word: string): boolean {
  return STANZA_KEYWORDS.includes(word) || (word.startsWith('allow-') && word.length > 6);
}

export interface IfaceSpan {
  iface: IfupdownIface;
  /** 0-based physical line range [start, end] from the iface line to its last option line */
  start: number;
  end: number;
}

export interface ParsedWithSpans {
  file: IfupdownFile;
  spans: IfaceSpan[];
  /** auto / allow-* lines with the names they list (for rewriting them) */
  allowLines: { keyword: string; names: string[]; start: number; end: number }[];
}

export function parseIfupdownWithSpans(text: string): ParsedWithSpans {
  const file: IfupdownFile = { auto: [], allow: {}, ifaces: [], mappings: [], sources: [], other: [] };
  const spans: IfaceSpan[] = [];
  const allowLines: ParsedWithSpans['allowLines'] = [];
  type Current = { kind: 'none' } | { kind: 'iface'; span: IfaceSpan } | { kind: 'mapping'; index: number };
  let current: Current = { kind: 'none' };

  for (const ll of logicalLines(text)) {
    const line = ll.start + 1;
    const [kw, rest] = firstWord(ll.text);
    if (kw === 'iface') {
      const w = words(rest);
      const name = w[0];
      if (!name) throw new ParseError(PARSER, 'too few parameters for iface line', line);
      let family: string | null = null;
      let method: string | null = null;
      let inherits: string | null = null;
      let k = 1;
      if (w[k] !== undefined && w[k] !== 'inherits') family = w[k++] ?? null;
      if (family !== null && w[k] !== undefined && w[k] !== 'inherits') method = w[k++] ?? null;
      if (w[k] === 'inherits') {
        inherits = w[k + 1] ?? null;
        if (!inherits) throw new ParseError(PARSER, "'inherits' keyword is missing a parameter", line);
        k += 2;
      }
      if (inherits === null && (family === null || method === null)) {
        throw new ParseError(PARSER, 'iface line needs an address family and a method (or inherits)', line);
      }
      if (w[k] !== undefined) throw new ParseError(PARSER, 'extra parameter on the iface line', line);
      const iface: IfupdownIface = { name, family, method, inherits, options: [], line };
      file.ifaces.push(iface);
      const span = { iface, start: ll.start, end: ll.end };
      spans.push(span);
      current = { kind: 'iface', span };
    } else if (kw === 'mapping') {
      const match = words(rest);
      if (match.length === 0) throw new ParseError(PARSER, 'mapping needs at least one pattern', line);
      file.mappings.push({ match, script: null, map: [], line });
      current = { kind: 'mapping', index: file.mappings.length - 1 };
    } else if (kw === 'source' || kw === 'source-directory' || kw === 'source-dir') {
      if (rest === '') throw new ParseError(PARSER, `${kw} needs a path`, line);
      file.sources.push({ kind: kw === 'source' ? 'source' : 'source-directory', path: rest, line });
      current = { kind: 'none' };
    } else if (kw === 'auto' || (kw.startsWith('allow-') && kw.length > 6)) {
      const names = words(rest);
      const cls = kw === 'auto' ? 'auto' : kw.slice(6);
      const target = cls === 'auto' ? file.auto : (file.allow[cls] ??= []);
      for (const n of names) if (!target.includes(n)) target.push(n);
      allowLines.push({ keyword: kw, names, start: ll.start, end: ll.end });
      current = { kind: 'none' };
    } else if (kw === 'no-auto-down' || kw === 'no-scripts' || kw === 'rename') {
      file.other.push({ keyword: kw, args: words(rest), line });
      current = { kind: 'none' };
    } else if (current.kind === 'iface') {
      if (rest === '') throw new ParseError(PARSER, `option "${kw}" with empty value`, line);
      current.span.iface.options.push({ name: kw, value: rest, line });
      current.span.end = ll.end;
    } else if (current.kind === 'mapping') {
      const m = file.mappings[current.index];
      if (!m) throw new ParseError(PARSER, 'internal: lost mapping', line);
      if (kw === 'script') {
        if (m.script !== null) throw new ParseError(PARSER, 'duplicate script in mapping', line);
        m.script = rest;
      } else if (kw === 'map') m.map.push(rest);
      else throw new ParseError(PARSER, 'misplaced option in mapping stanza', line);
    } else {
      throw new ParseError(PARSER, 'misplaced option (not inside an iface stanza)', line);
    }
  }
  return { file, spans, allowLines };
}

export function parseIfupdown(text: string): IfupdownFile {
  return parseIfupdownWithSpans(text).file;
}

/**
 * The inet stanza ifupdown would use for `name`: the first `iface name inet ...`. Later inet
 * stanzas of the same name add options (ifupdown merges them); we merge them the same way.
 */
export function findInetIface(file: IfupdownFile, name: string): IfupdownIface | null {
  const all = file.ifaces.filter((i) => i.name === name && i.family === 'inet');
  const first = all[0];
  if (!first) return null;
  if (all.length === 1) return first;
  return { ...first, options: all.flatMap((i) => i.options) };
}
