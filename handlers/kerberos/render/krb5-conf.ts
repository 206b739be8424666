/**
 * Renders the JSON form of a krb5.conf (Krb5Conf of ../parse/krb5-conf.ts, or the short realm-file form
 * with sections at top level) back to MIT profile syntax.
 *
 * Contract: for every object `x` the parser can produce, `parseKrb5Conf(renderKrb5Conf(x))`
 * deep-equals `x`. A client object round-trips the same way when it is in the parser's canonical
 * form (list tags such as `kdc` as arrays, other single values as strings, `finals` sorted);
 * anything else still renders to a file with the same meaning.
 *
 * Nothing a client sends can change the structure of the file: names are checked (a tag is one
 * word without `=`/`*`, a section name has no `]`), values that could be misread (leading or
 * trailing blanks, a leading `"` or `{`, newlines, empty) are written as quoted strings with
 * MIT's escapes, control characters that have no escape are refused, and no line may exceed
 * MIT's line buffer (fgets would split it and the rest would be parsed as a new line).
 * Comments and layout of an original file are not reproduced; routes keep the raw text.
 */
import * as z from 'zod';
import { issuesOf, issuesText } from '../../core/errors';
import {
  KRB5_MAX_LINE_BYTES,
  canonicalFinals,
  getOwn,
  krb5Directive,
  krb5Section,
  krb5SectionNameProblem,
  krb5TagProblem,
  type Krb5Conf,
  type Krb5Directive,
  type Krb5Section,
  type Krb5Value,
} from '../parse/krb5-conf';

/**
 * What a client may send for a realm file: either the full Krb5Conf shape, or just the sections
 * at top level (`{ realms: {…}, domain_realm: {…} }`). An object counts as the full shape when
 * it has `sections` and no keys besides `directives`, `sections` and `finals`; so a file cannot
 * be given in the short shape if its only section is called `sections` (krb5.conf has none).
 */
export type Krb5ConfInput =
  | { directives?: Krb5Directive[]; sections: Record<string, Krb5Section>; finals?: string[][] }
  | Record<string, Krb5Section>;

export interface Krb5ConfProblem {
  path: (string | number)[];
  message: string;
}

/** Thrown by renderKrb5Conf; routes turn `problems` into a 400 like zod issues. */
export class Krb5RenderError extends Error {
  readonly problems: Krb5ConfProblem[];
  constructor(problems: Krb5ConfProblem[]) {
    super(`krb5.conf render: ${problems.length > 0 ? issuesText(issuesOf('', { issues: problems })) : 'invalid'}`);
    this.name = 'Krb5RenderError';
    this.problems = problems;
  }
}

const MAX_DEPTH = 32;
const BLANK = ' \t\n\v\f\r';
const utf8 = new TextEncoder();

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Full shape: has `sections` and nothing besides directives/sections/finals (see Krb5ConfInput). */
export function isFullKrb5Conf(input: unknown): input is Partial<Krb5Conf> & Pick<Krb5Conf, 'sections'> {
  return (
    isPlainObject(input) &&
    hasOwn(input, 'sections') &&
    isPlainObject(input.sections) &&
    Object.keys(input).every((k) => k === 'directives' || k === 'sections' || k === 'finals')
  );
}

/** Either input shape as the full shape (missing lists become empty; finals made canonical). */
export function toKrb5Conf(input: Krb5ConfInput): Krb5Conf {
  if (isFullKrb5Conf(input)) {
    return {
      directives: input.directives ?? [],
      sections: input.sections,
      finals: canonicalFinals(input.finals ?? []),
    };
  }
  return { directives: [], sections: input as Record<string, Krb5Section>, finals: [] };
}

// --- values ------------------------------------------------------------------------------------

/** Control characters MIT's quoted strings cannot express (only \n, \t, \b have escapes). */
const UNESCAPABLE = /[\x00-\x07\x0a-\x1f]/;
const UNESCAPABLE_EXCEPT_NL = /[\x00-\x07\x0b-\x1f]/;

function valueProblem(v: string): string | undefined {
  if (UNESCAPABLE_EXCEPT_NL.test(v)) return 'control character other than tab, newline or backspace';
  return undefined;
}

function needsQuotes(v: string): boolean {
  return (
    v === '' ||
    BLANK.includes(v[0]) ||
    BLANK.includes(v[v.length - 1]) ||
    v[0] === '"' ||
    v[0] === '{' ||
    /[\n\b]/.test(v)
  );
}

function quote(v: string): string {
  let out = '"';
  for (const c of v) {
    if (c === '\\') out += '\\\\';
    else if (c === '"') out += '\\"';
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\b') out += '\\b';
    else out += c;
  }
  return out + '"';
}

export function renderKrb5Value(v: string): string {
  return needsQuotes(v) ? quote(v) : v;
}

// --- validation --------------------------------------------------------------------------------

const tooLong = (line: string) => utf8.encode(line).length > KRB5_MAX_LINE_BYTES;

function directiveProblems(d: Krb5Directive, sections: Record<string, unknown>): string[] {
  const out: string[] = [];
  const pathProblem = (p: string, what: string) => {
    if (p === '') out.push(`empty ${what}`);
    else if (UNESCAPABLE.test(p)) out.push(`control character in ${what}`);
    else if (BLANK.includes(p[0])) out.push(`${what} starts with a blank`);
  };
  if (d.type === 'module') {
    pathProblem(d.path, 'module path');
    if (d.path.includes(':')) out.push("module path contains ':' (MIT splits PATH:RESIDUAL at the first ':')");
    if (UNESCAPABLE.test(d.residual)) out.push('control character in module residual');
  } else {
    pathProblem(d.path, `${d.type} path`);
    if (d.section !== undefined && !hasOwn(sections, d.section)) out.push(`section '${d.section}' does not exist`);
  }
  if (tooLong(renderDirective(d))) out.push(`line longer than ${KRB5_MAX_LINE_BYTES} bytes`);
  return out;
}

function sectionProblems(node: unknown, path: (string | number)[], out: Krb5ConfProblem[], depth: number): void {
  if (!isPlainObject(node)) {
    out.push({ path, message: 'must be an object of tag → value' });
    return;
  }
  if (depth > MAX_DEPTH) {
    out.push({ path, message: `nested deeper than ${MAX_DEPTH} levels` });
    return;
  }
  for (const [tag, entry] of Object.entries(node)) {
    const tp = krb5TagProblem(tag);
    if (tp) out.push({ path: [...path, tag], message: tp });
    const items: unknown[] = Array.isArray(entry) ? entry : [entry];
    if (Array.isArray(entry) && entry.length === 0) {
      out.push({ path: [...path, tag], message: 'empty list (leave the tag out instead)' });
    }
    items.forEach((item, i) => {
      const ip = Array.isArray(entry) ? [...path, tag, i] : [...path, tag];
      if (typeof item === 'string') {
        const vp = valueProblem(item);
        if (vp) out.push({ path: ip, message: vp });
        else if (tooLong(`${'\t'.repeat(depth)}${tag}* = ${renderKrb5Value(item)}`)) {
          out.push({ path: ip, message: `line longer than ${KRB5_MAX_LINE_BYTES} bytes (MIT would split it)` });
        }
      } else if (isPlainObject(item)) {
        if (tooLong(`${'\t'.repeat(depth)}${tag} = {`))
          out.push({ path: ip, message: `line longer than ${KRB5_MAX_LINE_BYTES} bytes` });
        sectionProblems(item, ip, out, depth + 1);
      } else {
        out.push({ path: ip, message: 'must be a string, an object, or a list of them' });
      }
    });
  }
}

/** Does `path` name a section, subsection or relation of `sections`? */
function pathExists(sections: Record<string, unknown>, path: readonly string[]): boolean {
  if (path.length === 0 || !hasOwn(sections, path[0])) return false;
  let nodes: unknown[] = [sections[path[0]]];
  for (let i = 1; i < path.length; i++) {
    const found: unknown[] = [];
    for (const n of nodes) {
      if (!isPlainObject(n) || !hasOwn(n, path[i])) continue;
      const e = n[path[i]];
      found.push(...(Array.isArray(e) ? e : [e]));
    }
    if (found.length === 0) return false;
    // Only subsections can be descended into; the last step may name a relation.
    nodes = found.filter(isPlainObject);
    if (i < path.length - 1 && nodes.length === 0) return false;
  }
  return true;
}

/**
 * Everything that would stop `input` from rendering to a file with the same meaning. Empty when
 * it can be rendered. Used by renderKrb5Conf and by krb5ConfInput (as zod issues).
 */
export function krb5ConfProblems(input: unknown): Krb5ConfProblem[] {
  const out: Krb5ConfProblem[] = [];
  if (!isPlainObject(input)) return [{ path: [], message: 'must be an object' }];
  const full = isFullKrb5Conf(input);
  const sections: Record<string, unknown> = full ? (input.sections as Record<string, unknown>) : input;
  const base: string[] = full ? ['sections'] : [];

  for (const [name, node] of Object.entries(sections)) {
    const np =
      krb5SectionNameProblem(name) ??
      (tooLong(`[${name}]*`) ? `line longer than ${KRB5_MAX_LINE_BYTES} bytes` : undefined);
    if (np) out.push({ path: [...base, name], message: np });
    sectionProblems(node, [...base, name], out, 1);
  }
  if (!full) return out;

  const directives: unknown = input.directives ?? [];
  if (!Array.isArray(directives)) out.push({ path: ['directives'], message: 'must be a list' });
  else {
    directives.forEach((d, i) => {
      if (isPlainObject(d) && d.type === 'module' && hasOwn(d, 'section')) {
        out.push({ path: ['directives', i], message: 'a module directive must come before the first section' });
        return;
      }
      const parsed = krb5Directive.safeParse(d);
      if (!parsed.success) {
        out.push({
          path: ['directives', i],
          message: 'must be {type: include|includedir, path, section?} or {type: module, path, residual}',
        });
        return;
      }
      for (const m of directiveProblems(parsed.data, sections)) out.push({ path: ['directives', i], message: m });
    });
  }

  const finals: unknown = input.finals ?? [];
  if (!Array.isArray(finals)) out.push({ path: ['finals'], message: 'must be a list of paths' });
  else {
    finals.forEach((p, i) => {
      if (!Array.isArray(p) || p.length === 0 || !p.every((s): s is string => typeof s === 'string')) {
        out.push({ path: ['finals', i], message: 'must be a non-empty list of names' });
      } else if (!pathExists(sections, p)) {
        out.push({ path: ['finals', i], message: `'${p.join('.')}' names nothing in sections` });
      }
    });
  }
  return out;
}

// --- rendering ---------------------------------------------------------------------------------

function renderDirective(d: Krb5Directive): string {
  return d.type === 'module' ? `module ${d.path}:${d.residual}` : `${d.type} ${d.path}`;
}

export function renderKrb5Conf(input: Krb5ConfInput): string {
  const problems = krb5ConfProblems(input);
  if (problems.length > 0) throw new Krb5RenderError(problems);
  const conf = toKrb5Conf(input);
  const finalKeys = new Set(conf.finals.map((p) => JSON.stringify(p)));
  const isFinal = (path: string[]) => finalKeys.has(JSON.stringify(path));

  const lines: string[] = [];
  const emit = (line: string, path: (string | number)[]) => {
    if (utf8.encode(line).length > KRB5_MAX_LINE_BYTES) {
      throw new Krb5RenderError([{ path, message: `line longer than ${KRB5_MAX_LINE_BYTES} bytes` }]);
    }
    lines.push(line);
  };

  const body = (node: Krb5Section, path: string[], depth: number) => {
    const indent = '\t'.repeat(depth);
    for (const tag of Object.keys(node)) {
      const entry = getOwn(node, tag);
      if (entry === undefined) continue;
      const items: Krb5Value[] = Array.isArray(entry) ? entry : [entry];
      const p = [...path, tag];
      const star = isFinal(p) ? '*' : '';
      for (const item of items) {
        if (typeof item === 'string') {
          emit(`${indent}${tag}${star} = ${renderKrb5Value(item)}`, p);
        } else {
          // A final subsection is written as `}*`, the form every MIT release understands.
          emit(`${indent}${tag} = {`, p);
          body(item, p, depth + 1);
          emit(`${indent}}${star}`, p);
        }
      }
    }
  };

  const prologue = conf.directives.filter((d) => d.type === 'module' || d.section === undefined);
  for (const d of prologue) emit(renderDirective(d), ['directives']);
  if (prologue.length > 0) lines.push('');

  const names = Object.keys(conf.sections);
  names.forEach((name, i) => {
    emit(`[${name}]${isFinal([name]) ? '*' : ''}`, ['sections', name]);
    body(conf.sections[name], [name], 1);
    for (const d of conf.directives) {
      if (d.type !== 'module' && d.section === name) emit(renderDirective(d), ['directives']);
    }
    if (i < names.length - 1) lines.push('');
  });
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

/**
 * Request-side schema for a krb5.conf given as an object (global file or realm file), in either
 * shape. Structural errors come from zod; rendering problems are added as issues with paths.
 */
const sectionsInput = z.record(z.string(), krb5Section);
export const krb5ConfInput = z
  .union([
    z.strictObject({
      directives: z.array(krb5Directive).optional(),
      sections: sectionsInput,
      finals: z.array(z.array(z.string()).min(1)).optional(),
    }),
    sectionsInput,
  ])
  .superRefine((value, ctx) => {
    for (const p of krb5ConfProblems(value)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
  });
