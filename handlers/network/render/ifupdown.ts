/**
 * Rendering one interface's ifupdown stanza, and replacing/removing it inside an existing
 * /etc/network/interfaces text while keeping every other byte (comments, other stanzas,
 * blank lines, indentation) exactly as it was.
 *
 * Safety: everything written comes through `ifaceStanzaInput`. Option names are an allow-list
 * (the static-method options plus `bond*` / `slave*`, which the spec passes straight through),
 * so nobody can smuggle in `up`/`pre-up` hooks (shell commands run as root by ifup) or a stanza
 * keyword. Values are single safe tokens: no whitespace, newline, `#`, `\`, quotes or shell
 * metacharacters, so a value can neither start a new line/stanza nor be read as a comment or a
 * continuation by ifupdown or by the next human with an editor.
 */
import * as z from 'zod';
import { ifaceName } from '../names';
import { isStanzaKeyword, logicalLines, parseIfupdownWithSpans, physicalLines } from '../parse/ifupdown';

/** One value token: letters, digits and . _ : / + , = @ % - ; starts with a letter or digit. */
export const ifupdownToken = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:/+,=@%-]{0,254}$/,
    'must be a single token of A-Z a-z 0-9 . _ : / + , = @ % - (no spaces, #, quotes or line breaks)',
  );

const STATIC_OPTIONS = [
  'address',
  'netmask',
  'broadcast',
  'gateway',
  'mtu',
  'hwaddress',
  'metric',
  'pointopoint',
  'scope',
];

/** Option names we are willing to write. `bond-mode` and `bond_mode` both allowed (ifupdown
 *  exports both as IF_BOND_MODE); hook names and stanza keywords can never match. */
export const ifupdownOptionName = z
  .string()
  .regex(/^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/, 'not a valid option name')
  .refine(
    (n) => STATIC_OPTIONS.includes(n) || /^(bond|slave)/.test(n),
    'option not allowed (only address/netmask/broadcast/gateway/mtu/hwaddress/metric/pointopoint/scope, bond*, slave*)',
  )
  .refine((n) => !isStanzaKeyword(n), 'option name is an ifupdown keyword');

export const ifupdownOptionInput = z.object({
  name: ifupdownOptionName,
  /** an array is written space-separated (e.g. `bond-slaves eth0 eth1`) */
  value: z.union([ifupdownToken, z.array(ifupdownToken).min(1).max(64)]),
});

export const ifaceStanzaInput = z
  .object({
    name: ifaceName,
    method: z.enum(['static', 'dhcp', 'manual']),
    options: z.array(ifupdownOptionInput).max(64).default([]),
    /** also mark it `auto` so it comes up at boot (default true) */
    auto: z.boolean().default(true),
  })
  .refine((s) => new Set(s.options.map((o) => o.name)).size === s.options.length, 'duplicate option')
  .refine(
    (s) => s.method !== 'static' || s.options.some((o) => o.name === 'address'),
    'a static stanza needs an address',
  );
export type IfaceStanzaInput = z.input<typeof ifaceStanzaInput>;

const INDENT = '    ';

/** The `iface ...` block alone (no `auto` line), newline-terminated. Validates its input. */
export function renderIfaceBlock(input: IfaceStanzaInput): string {
  const s = ifaceStanzaInput.parse(input);
  let out = `iface ${s.name} inet ${s.method}\n`;
  for (const o of s.options) out += `${INDENT}${o.name} ${Array.isArray(o.value) ? o.value.join(' ') : o.value}\n`;
  return out;
}

/** A standalone stanza: `auto NAME` (unless auto is false) and the iface block. */
export function renderIfaceStanza(input: IfaceStanzaInput): string {
  const s = ifaceStanzaInput.parse(input);
  return (s.auto ? `auto ${s.name}\n` : '') + renderIfaceBlock(s);
}

const isBlank = (s: string | undefined) => s !== undefined && s.trim() === '';

/**
 * A removed block takes its separating blank line with it: when the kept line before a run of
 * dropped lines is blank and the run is followed by another blank line or the end of the
 * file, that blank line goes too. So removing a stanza the API appended (after a blank line)
 * gives back the file as it was, and removals never pile up blank lines.
 */
function dropSeparators(lines: string[], replacement: (string | undefined)[]): void {
  let i = 0;
  while (i < lines.length) {
    if (replacement[i] !== '') {
      i++;
      continue;
    }
    const start = i;
    while (i < lines.length && replacement[i] === '') i++;
    const prev = start - 1;
    const keptBlank = (k: number) => replacement[k] === undefined && isBlank(lines[k]);
    if (prev >= 0 && keptBlank(prev) && (i >= lines.length || keptBlank(i))) replacement[prev] = '';
  }
}

/**
 * Replace the inet stanza(s) of `name` in `text` with `input`, or remove every stanza of
 * `name` (all families) when `input` is null. Lines that do not belong to `name` are kept
 * byte for byte. Rules:
 *  - the first inet stanza is replaced in place; further inet stanzas of the same name (which
 *    ifupdown would merge into it) are dropped; inet6 stanzas are kept on replace;
 *  - with no existing inet stanza the new one is appended at the end, after a blank line;
 *  - `auto`: when input.auto, `auto NAME` is added right before the stanza unless an
 *    auto/allow-auto line already lists it; when input.auto is false, or on removal, NAME is
 *    taken out of auto/allow-auto lines (and on removal also out of every allow-CLASS line);
 *    a line left without names is deleted;
 *  - the text must parse (a file ifup would reject is not silently rewritten).
 * Only the lines of stanzas and auto lines in *this* text are touched: stanzas in files pulled
 * in with `source` are the caller's business (the parse result lists them).
 */
export function replaceIfaceStanza(text: string, name: string, input: IfaceStanzaInput | null): string {
  ifaceName.parse(name);
  const stanza = input === null ? null : ifaceStanzaInput.parse(input);
  if (stanza && stanza.name !== name) throw new Error(`stanza is for ${stanza.name}, not ${name}`);
  const { spans, allowLines } = parseIfupdownWithSpans(text);
  // Raw physical lines with their own terminators, so kept lines are copied byte for byte
  // (CRLF, a missing final newline, trailing spaces all survive).
  const raw = text === '' ? [] : text.split(/(?<=\n)/);
  const lines = physicalLines(text);
  if (raw.length !== lines.length) throw new Error('internal: line split mismatch');
  const nl = /\r\n/.test(text) ? '\r\n' : '\n';

  // replacement[i] = undefined: keep line i; string: emit this instead (may be '' = drop)
  const replacement: (string | undefined)[] = new Array(lines.length).fill(undefined);
  const drop = (start: number, end: number) => {
    for (let i = start; i <= end; i++) replacement[i] = '';
  };

  const mine = spans.filter((s) => s.iface.name === name && (stanza === null || s.iface.family === 'inet'));
  const block = stanza ? renderIfaceBlock(stanza).replace(/\n/g, nl) : '';

  const alreadyAuto = allowLines.some(
    (l) => (l.keyword === 'auto' || l.keyword === 'allow-auto') && l.names.includes(name),
  );
  const wantAuto = stanza !== null && stanza.auto;

  // auto / allow lines that must lose the name
  for (const l of allowLines) {
    const isAuto = l.keyword === 'auto' || l.keyword === 'allow-auto';
    const strip = stanza === null ? true : !stanza.auto && isAuto;
    if (!strip || !l.names.includes(name)) continue;
    const rest = l.names.filter((n) => n !== name);
    drop(l.start, l.end);
    if (rest.length) {
      const indent = /^\s*/.exec(lines[l.start] ?? '')?.[0] ?? '';
      replacement[l.start] = `${indent}${l.keyword} ${rest.join(' ')}${nl}`;
    }
  }

  let appended = '';
  const first = mine[0];
  if (stanza && first) {
    for (const s of mine) drop(s.start, s.end);
    replacement[first.start] = (wantAuto && !alreadyAuto ? `auto ${name}${nl}` : '') + block;
  } else if (stanza) {
    appended = (wantAuto && !alreadyAuto ? `auto ${name}${nl}` : '') + block;
  } else {
    for (const s of mine) drop(s.start, s.end);
  }

  dropSeparators(lines, replacement);

  let out = '';
  raw.forEach((line, i) => {
    const r = replacement[i];
    out += r === undefined ? line : r;
  });
  if (appended) {
    if (out !== '' && !out.endsWith('\n')) out += nl;
    if (out !== '' && !/(\r?\n){2}$/.test(out)) out += nl;
    out += appended;
  }
  return out;
}

/**
 * Set (or, with `option` null, delete) one option of the first inet stanza of `name`, keeping
 * every other byte of `text`, including options we would never write ourselves (hooks,
 * dns-*): used where the API changes one thing in a stanza it does not fully own, such as a
 * bond's port list. `aliases` are names ifupdown treats as the same option (`slaves`,
 * `bond-slaves`, `bond_slaves`): the first one present is rewritten in place, under its own
 * spelling unless `option.name` says otherwise, with its indentation; the other aliases are
 * dropped. With none present the option is added after the stanza's last option line.
 * Returns null when the text has no inet stanza for `name`.
 */
export function setIfaceOption(
  text: string,
  name: string,
  aliases: string[],
  option: { name?: string; value: string | string[] } | null,
): string | null {
  ifaceName.parse(name);
  const { spans } = parseIfupdownWithSpans(text);
  const span = spans.find((s) => s.iface.name === name && s.iface.family === 'inet');
  if (!span) return null;
  const raw = text === '' ? [] : text.split(/(?<=\n)/);
  const lines = physicalLines(text);
  const nl = /\r\n/.test(text) ? '\r\n' : '\n';
  const logical = logicalLines(text);
  const present = span.iface.options.filter((o) => aliases.includes(o.name));
  const first = present[0];
  let rendered: string | null = null;
  if (option) {
    const o = ifupdownOptionInput.parse({ name: option.name ?? first?.name ?? aliases[0], value: option.value });
    rendered = `${o.name} ${Array.isArray(o.value) ? o.value.join(' ') : o.value}`;
  }
  const replacement: (string | undefined)[] = new Array(lines.length).fill(undefined);
  for (const o of present) {
    const ll = logical.find((l) => l.start === o.line - 1);
    if (!ll) throw new Error(`internal: no logical line at ${o.line}`);
    for (let i = ll.start; i <= ll.end; i++) replacement[i] = '';
    if (o === first && rendered !== null) {
      const indent = /^\s*/.exec(lines[ll.start] ?? '')?.[0] ?? INDENT;
      replacement[ll.start] = `${indent}${rendered}${nl}`;
    }
  }
  let out = '';
  raw.forEach((line, i) => {
    const r = replacement[i];
    out += r === undefined ? line : r;
    if (i === span.end && !first && rendered !== null) {
      const sample = span.iface.options[0];
      const indent = sample ? (/^\s*/.exec(lines[sample.line - 1] ?? '')?.[0] ?? INDENT) : INDENT;
      if (!out.endsWith('\n')) out += nl;
      out += `${indent}${rendered}${nl}`;
    }
  });
  return out;
}
