/**
 * authorized_keys (sshd(8) "AUTHORIZED_KEYS FILE FORMAT", OpenSSH 9.2): one key per line,
 * `[options] keytype base64 [comment]`; blank lines and `#` lines are ignored by sshd and kept
 * by every rewrite here. Options run up to the first whitespace outside double quotes (`\"`
 * escapes a quote inside them). Pure: no bindings.
 *
 * The listing never drops a line: a line sshd could not use is listed with empty key fields and
 * an `error` saying why, so an operator sees it (and can remove it by hand).
 */
import { ParseError } from '../../core/parse-error';
import { decodeKey, isKeyType, KeyBlobError } from './ssh-key';

export const PARSER = 'authorized_keys';

/** Options that take no value (names are case-insensitive, as in sshd). */
export const FLAG_OPTIONS = new Set([
  'agent-forwarding',
  'no-agent-forwarding',
  'cert-authority',
  'no-port-forwarding',
  'port-forwarding',
  'no-pty',
  'pty',
  'no-user-rc',
  'user-rc',
  'no-x11-forwarding',
  'x11-forwarding',
  'no-touch-required',
  'verify-required',
  'restrict',
]);

/** Options that take a double-quoted value, and how the value must look. */
export const VALUE_OPTIONS: Record<string, RegExp> = {
  command: /^[^]*$/,
  environment: /^[A-Za-z_][A-Za-z0-9_]*=[^]*$/,
  'expiry-time': /^\d{8}(\d{4}(\d{2})?)?Z?$/,
  from: /^\S+$/,
  permitlisten: /^\S+$/,
  permitopen: /^\S+$/,
  principals: /^\S+$/,
  tunnel: /^\d+$/,
};

export interface KeyOption {
  name: string;
  /** the value with its quotes removed and `\"` unescaped; absent for flags */
  value?: string;
}

export interface KeyLine {
  /** the options field as written, or '' */
  options: string;
  algo: string;
  blob: string;
  comment: string;
  fingerprint: string;
  bits: number;
  certificate: boolean;
  /** the line as read (a trailing CR removed) */
  line: string;
}

export class KeyLineError extends Error {}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t';

/** Index just after the options field: the first space or tab outside double quotes. */
function endOfOptions(line: string, from: number): number {
  let quoted = false;
  let i = from;
  for (; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '\\' && line[i + 1] === '"') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (isSpace(c)) break;
  }
  if (quoted) throw new KeyLineError('the options have an unterminated double quote');
  return i;
}

/** Splits `a,b="x,y",c` at commas outside quotes and checks each option. */
export function parseOptions(field: string): KeyOption[] {
  const out: KeyOption[] = [];
  let i = 0;
  while (i <= field.length) {
    const m = /^[A-Za-z0-9-]+/.exec(field.slice(i));
    if (!m) throw new KeyLineError(`option ${out.length + 1} has no name`);
    const name = m[0].toLowerCase();
    i += m[0].length;
    let value: string | undefined;
    if (field[i] === '=') {
      if (field[i + 1] !== '"') throw new KeyLineError(`option ${name}: the value must be in double quotes`);
      let j = i + 2;
      let v = '';
      for (; j < field.length; j++) {
        const c = field[j];
        if (c === '\\' && field[j + 1] === '"') {
          v += '"';
          j++;
        } else if (c === '"') break;
        else v += c;
      }
      if (j >= field.length) throw new KeyLineError(`option ${name}: unterminated double quote`);
      value = v;
      i = j + 1;
    }
    if (FLAG_OPTIONS.has(name)) {
      if (value !== undefined) throw new KeyLineError(`option ${name} takes no value`);
    } else if (name in VALUE_OPTIONS) {
      if (value === undefined) throw new KeyLineError(`option ${name} needs a value (${name}="…")`);
      if (!VALUE_OPTIONS[name].test(value)) throw new KeyLineError(`option ${name} has an invalid value`);
    } else {
      throw new KeyLineError(`unknown option ${name}`);
    }
    out.push(value === undefined ? { name } : { name, value });
    if (i === field.length) break;
    if (field[i] !== ',') throw new KeyLineError(`option ${name}: expected a comma after it`);
    i++;
    if (i === field.length) throw new KeyLineError('the options end with a comma');
  }
  return out;
}

function token(line: string, from: number): { text: string; end: number } {
  let i = from;
  while (i < line.length && isSpace(line[i])) i++;
  let j = i;
  while (j < line.length && !isSpace(line[j])) j++;
  return { text: line.slice(i, j), end: j };
}

/** One key line (not blank, not a comment). Throws KeyLineError saying what is wrong. */
export function parseKeyLine(raw: string): KeyLine {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line.includes('\0')) throw new KeyLineError('the line contains a NUL byte');
  let pos = 0;
  while (isSpace(line[pos])) pos++;
  const first = token(line, pos);
  let options = '';
  let algo = first;
  if (!isKeyType(first.text)) {
    const end = endOfOptions(line, pos);
    options = line.slice(pos, end);
    algo = token(line, end);
    if (!isKeyType(algo.text)) {
      // `ssh-foo AAAA…`: an unknown key type rather than options
      if (/^[a-z0-9@.-]+$/.test(first.text) && /^AAAA/.test(algo.text))
        throw new KeyLineError(`unknown key type ${first.text}`);
      if (algo.text === '') throw new KeyLineError('no key type');
      parseOptions(options);
      throw new KeyLineError(`unknown key type ${algo.text}`);
    }
    parseOptions(options);
  }
  const blob = token(line, algo.end);
  if (blob.text === '') throw new KeyLineError('no key after the key type');
  let decoded;
  try {
    decoded = decodeKey(algo.text, blob.text);
  } catch (e) {
    if (e instanceof KeyBlobError) throw new KeyLineError(e.message);
    throw e;
  }
  const comment = line.slice(blob.end).replace(/^[ \t]+|[ \t]+$/g, '');
  return {
    options,
    algo: algo.text,
    blob: blob.text,
    comment,
    fingerprint: decoded.fingerprint,
    bits: decoded.bits,
    certificate: decoded.certificate,
    line,
  };
}

export interface AuthorizedKeyEntry {
  /** position among the listed lines (keys and unusable lines; blanks and comments are not listed), from 0 */
  index: number;
  algo: string;
  blob: string;
  comment: string;
  fingerprint: string;
  line: string;
  /** present when sshd could not use the line: why */
  error?: string;
}

/** A line sshd skips: blank or a `#` comment. */
export function isIgnoredLine(raw: string): boolean {
  const t = raw.replace(/^[ \t]+/, '');
  return t === '' || t === '\r' || t.startsWith('#');
}

/** The file's lines split on LF, the bytes of each kept (a CRLF line keeps its CR). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function parseAuthorizedKeys(text: string): AuthorizedKeyEntry[] {
  if (text.includes('\0')) throw new ParseError(PARSER, 'the file contains NUL bytes: not a text file');
  const out: AuthorizedKeyEntry[] = [];
  for (const raw of splitLines(text)) {
    if (isIgnoredLine(raw)) continue;
    const index = out.length;
    try {
      const k = parseKeyLine(raw);
      out.push({ index, algo: k.algo, blob: k.blob, comment: k.comment, fingerprint: k.fingerprint, line: k.line });
    } catch (e) {
      if (!(e instanceof KeyLineError)) throw e;
      out.push({
        index,
        algo: '',
        blob: '',
        comment: '',
        fingerprint: '',
        line: raw.endsWith('\r') ? raw.slice(0, -1) : raw,
        error: e.message,
      });
    }
  }
  return out;
}

/** A `.pub` file: exactly one key line (no options), optionally followed by a newline. */
export function parsePublicKeyFile(text: string): KeyLine {
  const lines = splitLines(text).filter((l) => !isIgnoredLine(l));
  if (lines.length !== 1) throw new ParseError('public key file', `expected one key line, found ${lines.length}`);
  try {
    const k = parseKeyLine(lines[0]);
    if (k.options !== '') throw new KeyLineError('a public key file has no options');
    return k;
  } catch (e) {
    if (e instanceof KeyLineError) throw new ParseError('public key file', e.message, 1);
    throw e;
  }
}

/** `MD5:20:FD:…` or `20:fd:…` → `20:fd:…`; null when it is not an MD5 fingerprint. */
export function normalizeFingerprint(fp: string): string | null {
  const s = fp.trim().replace(/^md5:/i, '').toLowerCase();
  return /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/.test(s) ? s : null;
}

/** The file with `line` appended (a missing final newline is added first). */
export function appendLine(text: string | null, line: string): string {
  const base = text ?? '';
  return `${base}${base === '' || base.endsWith('\n') ? '' : '\n'}${line}\n`;
}

/**
 * The file without the key lines whose fingerprint is `fingerprint`; every other line (comments,
 * blanks, unusable lines, other keys) is kept byte for byte.
 */
export function removeByFingerprint(text: string, fingerprint: string): { text: string; removed: KeyLine[] } {
  // each unit is one line with its own terminator, so what is kept is kept exactly
  const units = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const kept: string[] = [];
  const removed: KeyLine[] = [];
  for (const unit of units) {
    const raw = unit.endsWith('\n') ? unit.slice(0, -1) : unit;
    if (!isIgnoredLine(raw)) {
      try {
        const k = parseKeyLine(raw);
        if (k.fingerprint === fingerprint) {
          removed.push(k);
          continue;
        }
      } catch (e) {
        if (!(e instanceof KeyLineError)) throw e;
      }
    }
    kept.push(unit);
  }
  return { text: kept.join(''), removed };
}
