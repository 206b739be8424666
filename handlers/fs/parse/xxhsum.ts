/**
 * xxhsum (xxHash CLI) output and checksum files.
 *
 * Written against xxhash 0.8.1 (Debian 12) and the 0.8.2+ changes, from the tool's source
 * (cli/xxhsum.c) and real captures (../shared/upstream-samples/xxhsum/, fixtures/xxhsum/):
 *
 * generate (`xxhsum [-H0|-H1|-H2|-H3] [--tag] [--little-endian] -- files...`), stdout:
 *   GNU  `<hex>  <name>`               8 hex = XXH32, 16 = XXH64 (default), 32 = XXH128
 *        `XXH3_<16 hex>  <name>`       XXH3-64, 0.8.2+ only
 *   BSD  `<ALG>[_LE] (<name>) = <hex>` with --tag, and always for -H3 in 0.8.1
 *   0.8.2+ escapes names holding `\`, LF or CR: the line starts with `\` and the name is
 *   written with `\\`, `\n`, `\r`. 0.8.1 prints names raw, so a newline in a name breaks the
 *   line; only the caller knows where such a name ends, hence `fileNames` below.
 * check (`xxhsum -c sums`): `<name>: OK|FAILED` lines and summaries on stdout, the
 *   `--warn` / "no properly formatted lines" messages and progress-line noise on stderr.
 *
 * stderr is never parsed together with stdout: xxhsum writes `\r` + spaces + `\r` there.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import type { CheckResult } from '../check-result';

// ---- output shapes (the fixture table checks every parse against them) ----

/**
 * Hash family as xxhsum names it in BSD (`--tag`) lines. XXH3 is the 64-bit XXH3 variant (`-H3`);
 * XXH128 is XXH3's 128-bit variant (`-H2`).
 */
export const xxhAlgorithm = z.enum(['XXH32', 'XXH64', 'XXH128', 'XXH3']);
export type XxhAlgorithm = z.infer<typeof xxhAlgorithm>;

/** Lower- or upper-case hex; xxhsum prints lower case, checksum files may hold either. */
const hex = z.string().regex(/^[0-9a-fA-F]+$/);

/** One line of `xxhsum` generate output. `hash` is the bare hex digest (no `XXH3_` prefix). */
export const xxhsumSum = z.object({
  hash: hex,
  fileName: z.string(),
  algorithm: xxhAlgorithm,
  /** present (true) only when the output said so (`XXH64_LE (...)` with `--little-endian --tag`) */
  littleEndian: z.literal(true).optional(),
});
export type XxhsumSum = z.infer<typeof xxhsumSum>;

/**
 * Result of one checked file. `FAILED open or read` is GNU md5sum's wording; xxhsum says
 * `<sums>:<line>: Could not open or read '<name>': <reason>.` and we map that to the same result
 * so callers see one vocabulary.
 */
export const xxhsumCheckResult = z.enum(['OK', 'FAILED', 'FAILED open or read']);
export type XxhsumCheckResult = z.infer<typeof xxhsumCheckResult>;

export const xxhsumCheckEntry = z.object({
  fileName: z.string(),
  result: xxhsumCheckResult,
  /** line of the checksum file, when the tool named it (only the open-or-read message does) */
  line: z.number().int().positive().optional(),
  /** strerror text of an open-or-read failure, e.g. `No such file or directory` */
  reason: z.string().optional(),
});
export type XxhsumCheckEntry = z.infer<typeof xxhsumCheckEntry>;

export const xxhsumCheck = z.object({
  results: z.array(xxhsumCheckEntry),
  counts: z.object({
    /** OK lines seen (0 under `-q`/`--status`, which hide them) */
    ok: z.number().int().nonnegative(),
    /** from the `N computed checksum(s) did NOT match` summary, else counted from lines */
    failed: z.number().int().nonnegative(),
    /** from the `N listed file(s) could not be read` summary, else counted from lines */
    unreadable: z.number().int().nonnegative(),
    /** from the `N line(s) ... improperly formatted` summary */
    improperlyFormatted: z.number().int().nonnegative(),
  }),
  /** stderr said `<file>: no properly formatted xxHash checksum lines found` */
  noProperlyFormattedLines: z.boolean(),
  /** checksum-file line numbers named by `--warn` (`<file>:<n>: Error: Improperly formatted ...`) */
  improperLines: z.array(z.number().int().positive()),
  /** any other stderr line, trimmed (e.g. the checksum file itself could not be opened) */
  errors: z.array(z.string()),
});
export type XxhsumCheck = z.infer<typeof xxhsumCheck>;

/** One properly formatted line of a checksum file, as xxhsum -c would read it. */
export const checksumFileEntry = z.object({
  line: z.number().int().positive(),
  hash: hex,
  fileName: z.string(),
  algorithm: xxhAlgorithm,
  style: z.enum(['gnu', 'bsd']),
  /** the line started with `\` (xxhsum >= 0.8.2 / GNU escaping of `\\`, `\n`, `\r`) */
  escaped: z.boolean(),
  littleEndian: z.literal(true).optional(),
});
export type ChecksumFileEntry = z.infer<typeof checksumFileEntry>;

export const checksumFile = z.object({
  entries: z.array(checksumFileEntry),
  /** lines xxhsum would count as improperly formatted (blank lines included) */
  improper: z.array(z.object({ line: z.number().int().positive(), reason: z.string() })),
  /** `#` lines: ignored by xxhsum >= 0.8.2, counted as improper by 0.8.1 */
  comments: z.array(z.number().int().positive()),
});
export type ChecksumFile = z.infer<typeof checksumFile>;

const GEN = 'xxhsum';
const CHECK = 'xxhsum -c';

/** hex digits per algorithm, as printed (XXH3 without its `XXH3_` prefix) */
const HEX_LENGTH: Record<XxhAlgorithm, number> = { XXH32: 8, XXH64: 16, XXH128: 32, XXH3: 16 };

/**
 * Split command output into lines. Non-empty output must end with a newline: xxhsum always
 * ends its lines, so a missing one means the output was cut, and a cut hash could still look
 * like a valid shorter one (16 hex cut to 8 reads as XXH32).
 */
function outputLines(parser: string, text: string): string[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) {
    const n = text.split('\n').length;
    throw new ParseError(parser, 'output ends without a newline (truncated?)', n);
  }
  return text.slice(0, -1).split('\n');
}

/** xxhsum 0.8.2+ / GNU name escaping: only `\\`, `\n`, `\r`; anything else is invalid. */
export function unescapeXxhName(escaped: string): string | null {
  let out = '';
  for (let i = 0; i < escaped.length; i++) {
    const c = escaped[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = escaped[++i];
    if (next === 'n') out += '\n';
    else if (next === 'r') out += '\r';
    else if (next === '\\') out += '\\';
    else return null; // also a trailing lone backslash
  }
  return out;
}

/** The inverse, used to match expected names against 0.8.2+ output. */
export function escapeXxhName(name: string): string {
  return name.replace(/[\\\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\r'));
}

function needsEscape(name: string): boolean {
  return /[\\\n\r]/.test(name);
}

function algorithmFromTag(tag: string): XxhAlgorithm | null {
  return tag === 'XXH32' || tag === 'XXH64' || tag === 'XXH128' || tag === 'XXH3' ? tag : null;
}

function algorithmFromGnuToken(token: string): { algorithm: XxhAlgorithm; hash: string } | null {
  if (/^XXH3_[0-9a-f]{16}$/.test(token)) return { algorithm: 'XXH3', hash: token.slice(5) };
  if (!/^[0-9a-f]+$/.test(token)) return null;
  if (token.length === 8) return { algorithm: 'XXH32', hash: token };
  if (token.length === 16) return { algorithm: 'XXH64', hash: token };
  if (token.length === 32) return { algorithm: 'XXH128', hash: token };
  return null;
}

function sum(hash: string, fileName: string, algorithm: XxhAlgorithm, le: boolean): XxhsumSum {
  return le ? { hash, fileName, algorithm, littleEndian: true } : { hash, fileName, algorithm };
}

// GNU: `[\]<token>  <name>`; BSD: `[\]<ALG>[_LE] (<name>) = <hex>` (greedy name: a name may
// itself contain `) = `, the hash is anchored at the end of the line).
const GNU_LINE = /^(\\?)(\S+) {2}(.+)$/s;
const BSD_LINE = /^(\\?)(XXH32|XXH64|XXH128|XXH3)(_LE)? \((.*)\) = ([0-9a-f]+)$/s;

function parseSumLine(line: string, lineNo: number): XxhsumSum {
  const bsd = BSD_LINE.exec(line);
  if (bsd) {
    const [, esc, tag, le, rawName, hash] = bsd;
    const algorithm = algorithmFromTag(tag) as XxhAlgorithm;
    if (hash.length !== HEX_LENGTH[algorithm]) {
      throw new ParseError(GEN, `${tag} hash must have ${HEX_LENGTH[algorithm]} hex digits`, lineNo);
    }
    return sum(hash, decodeName(esc, rawName, lineNo), algorithm, le === '_LE');
  }
  const gnu = GNU_LINE.exec(line);
  if (gnu) {
    const [, esc, token, rawName] = gnu;
    const parsed = algorithmFromGnuToken(token);
    if (parsed) return sum(parsed.hash, decodeName(esc, rawName, lineNo), parsed.algorithm, false);
  }
  throw new ParseError(
    GEN,
    'not a checksum line (expected `<hex>  <name>` or `<ALG> (<name>) = <hex>`; a name with a raw newline needs the expected file names)',
    lineNo,
  );
}

function decodeName(esc: string, raw: string, lineNo: number): string {
  if (esc === '') return raw;
  const name = unescapeXxhName(raw);
  if (name === null) throw new ParseError(GEN, 'invalid escape in file name', lineNo);
  return name;
}

export interface ParseSumsOptions {
  /**
   * The file names exactly as passed to xxhsum, in argv order. With them the parser consumes
   * the output name by name, so a raw newline in a name (0.8.1) cannot break it. Names that
   * xxhsum could not read are simply absent from the output (it reports them on stderr).
   */
  fileNames?: readonly string[];
}

/** Parse `xxhsum` generate output (any -H, GNU or --tag, escaped or raw names). */
export function parseXxhsumSums(stdout: string, options: ParseSumsOptions = {}): XxhsumSum[] {
  if (options.fileNames) return parseSumsWithNames(stdout, options.fileNames);
  return outputLines(GEN, stdout).map((line, i) => parseSumLine(line, i + 1));
}

const GNU_PREFIX = /(\\?)(XXH3_[0-9a-f]{16}|[0-9a-f]{32}|[0-9a-f]{16}|[0-9a-f]{8}) {2}/y;
const BSD_PREFIX = /(\\?)(XXH32|XXH64|XXH128|XXH3)(_LE)? \(/y;
const BSD_SUFFIX = /\) = ([0-9a-f]+)\n/y;

function lineAt(text: string, pos: number): number {
  let n = 1;
  for (let i = 0; i < pos; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

function parseSumsWithNames(stdout: string, names: readonly string[]): XxhsumSum[] {
  const out: XxhsumSum[] = [];
  let pos = 0;
  let next = 0; // index of the first expected name not yet seen
  while (pos < stdout.length) {
    let matched: { entry: XxhsumSum; end: number; index: number } | null = null;
    // The output follows argv order; unreadable files are skipped, so try the remaining names
    // in order and take the first one that fits exactly (hash, separator, name, newline).
    for (let j = next; j < names.length && !matched; j++) {
      matched = matchNamedLine(stdout, pos, names[j], j);
    }
    if (!matched) {
      throw new ParseError(GEN, 'line does not match any expected file name', lineAt(stdout, pos));
    }
    out.push(matched.entry);
    pos = matched.end;
    next = matched.index + 1;
  }
  return out;
}

function matchNamedLine(
  text: string,
  pos: number,
  name: string,
  index: number,
): { entry: XxhsumSum; end: number; index: number } | null {
  GNU_PREFIX.lastIndex = pos;
  const gnu = GNU_PREFIX.exec(text);
  if (gnu) {
    const [all, esc, token] = gnu;
    const printed = esc ? escapeXxhName(name) : name;
    const at = pos + all.length;
    if ((esc === '' || needsEscape(name)) && text.startsWith(printed + '\n', at)) {
      const parsed = algorithmFromGnuToken(token);
      if (parsed) {
        return { entry: sum(parsed.hash, name, parsed.algorithm, false), end: at + printed.length + 1, index };
      }
    }
  }
  BSD_PREFIX.lastIndex = pos;
  const bsd = BSD_PREFIX.exec(text);
  if (bsd) {
    const [all, esc, tag, le] = bsd;
    const printed = esc ? escapeXxhName(name) : name;
    const at = pos + all.length;
    if ((esc === '' || needsEscape(name)) && text.startsWith(printed, at)) {
      BSD_SUFFIX.lastIndex = at + printed.length;
      const suffix = BSD_SUFFIX.exec(text);
      const algorithm = algorithmFromTag(tag) as XxhAlgorithm;
      if (suffix && suffix[1].length === HEX_LENGTH[algorithm]) {
        return {
          entry: sum(suffix[1], name, algorithm, le === '_LE'),
          end: BSD_SUFFIX.lastIndex,
          index,
        };
      }
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// xxhsum -c
// ---------------------------------------------------------------------------------------------

const SUMMARY_IMPROPER = /^(\d+) (?:line is|lines are) improperly formatted$/;
const SUMMARY_UNREADABLE = /^(\d+) listed files? could not be read$/;
const SUMMARY_FAILED = /^(\d+) computed checksums? did NOT match$/;
// `<sums>:<n>: Could not open or read '<name>': <strerror>.` The name is printed raw and may
// hold `': `; strerror texts never hold a quote, so the last `': ` ends the name.
const OPEN_FAILED = /^(.*?):(\d+): Could not open or read '(.*)': ([^']*)\.$/s;
const OPEN_FAILED_START = /^.*?:\d+: Could not open or read '/;
const RESULT = /^(.*): (OK|FAILED open or read|FAILED)$/s;

export interface ParseCheckOptions {
  /**
   * The names listed in the checksum file (parseChecksumFile). Only needed to tell apart a
   * 0.8.2+ escaped name (`\` + escaped name) from a 0.8.1 raw name that starts with `\`;
   * without them names are taken raw, which is what Debian 12's 0.8.1 prints.
   */
  fileNames?: readonly string[];
}

/** Parse `xxhsum -c` output: stdout (results, summaries) and stderr (warnings) separately. */
export function parseXxhsumCheck(stdout: string, stderr = '', options: ParseCheckOptions = {}): XxhsumCheck {
  const known = options.fileNames ? new Set(options.fileNames) : null;
  const results: XxhsumCheckEntry[] = [];
  let summaryFailed: number | null = null;
  let summaryUnreadable: number | null = null;
  let improperlyFormatted = 0;
  const lines = outputLines(CHECK, stdout);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    const lineNo = i + 1;
    let m: RegExpExecArray | null;
    if ((m = SUMMARY_IMPROPER.exec(line))) {
      improperlyFormatted = Number(m[1]);
      continue;
    }
    if ((m = SUMMARY_UNREADABLE.exec(line))) {
      summaryUnreadable = Number(m[1]);
      continue;
    }
    if ((m = SUMMARY_FAILED.exec(line))) {
      summaryFailed = Number(m[1]);
      continue;
    }
    if (OPEN_FAILED_START.test(line)) {
      // a name with a newline (only possible through 0.8.2+ unescaping) is printed raw here:
      // join following lines until the message is complete
      let j = i;
      while (!OPEN_FAILED.test(line) && j + 1 < lines.length) line += '\n' + lines[++j];
      m = OPEN_FAILED.exec(line);
      if (!m) throw new ParseError(CHECK, 'unterminated "Could not open or read" message', lineNo);
      i = j;
      results.push({ fileName: m[3], result: 'FAILED open or read', line: Number(m[2]), reason: m[4] });
      continue;
    }
    if ((m = RESULT.exec(line))) {
      const fileName = resolveCheckName(m[1], known, lineNo);
      results.push({ fileName, result: m[2] as XxhsumCheckEntry['result'] });
      continue;
    }
    throw new ParseError(CHECK, 'unrecognised line in check output', lineNo);
  }

  const ok = results.filter((r) => r.result === 'OK').length;
  const failedLines = results.filter((r) => r.result === 'FAILED').length;
  const unreadableLines = results.filter((r) => r.result === 'FAILED open or read').length;
  // The summaries are authoritative (`-q` hides OK lines but never FAILED ones); if they
  // disagree with the lines we read, we misread something: say so instead of guessing.
  if (summaryFailed !== null && summaryFailed !== failedLines) {
    throw new ParseError(CHECK, `summary says ${summaryFailed} mismatches but ${failedLines} FAILED lines were read`);
  }
  if (summaryUnreadable !== null && summaryUnreadable !== unreadableLines) {
    throw new ParseError(CHECK, `summary says ${summaryUnreadable} unreadable files but ${unreadableLines} were read`);
  }

  const err = parseCheckStderr(stderr);
  return {
    results,
    counts: { ok, failed: failedLines, unreadable: unreadableLines, improperlyFormatted },
    noProperlyFormattedLines: err.noProperlyFormattedLines,
    improperLines: err.improperLines,
    errors: err.errors,
  };
}

function resolveCheckName(printed: string, known: Set<string> | null, lineNo: number): string {
  if (!printed.startsWith('\\')) return printed;
  const unescaped = unescapeXxhName(printed.slice(1));
  if (!known) return printed; // 0.8.1 semantics: raw
  if (known.has(printed)) return printed;
  if (unescaped !== null && known.has(unescaped)) return unescaped;
  throw new ParseError(CHECK, 'result names a file that is not in the checksum file', lineNo);
}

const WARN_IMPROPER = /^.*:(\d+): Error: Improperly formatted checksum line\.$/;
const NO_PROPER = /^.*: no properly formatted xxHash checksum lines found$/;

function parseCheckStderr(stderr: string): Pick<XxhsumCheck, 'noProperlyFormattedLines' | 'improperLines' | 'errors'> {
  let noProperlyFormattedLines = false;
  const improperLines: number[] = [];
  const errors: string[] = [];
  // `\r` + padding + `\r` clears xxhsum's progress line; treat CR as a line break and drop blanks.
  for (const raw of stderr.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    let m: RegExpExecArray | null;
    if ((m = WARN_IMPROPER.exec(line))) improperLines.push(Number(m[1]));
    else if (NO_PROPER.test(line)) noProperlyFormattedLines = true;
    else errors.push(line);
  }
  return { noProperlyFormattedLines, improperLines, errors };
}

// ---------------------------------------------------------------------------------------------
// checksum files (input of xxhsum -c), read the way xxhsum reads them
// ---------------------------------------------------------------------------------------------

/**
 * Read a checksum file the way xxhsum -c reads it, so that the name we check (absolute or
 * not) is the very name xxhsum will open. Deliberately the union of 0.8.1 and 0.8.2+ rules:
 * a line either version would accept is an entry here.
 *
 * Rules (cli/xxhsum.c, XSUM_parseLine):
 * - lines end at LF only; a CR stays part of the name (xxhsum opens `name\r`);
 * - `#` in column 1: comment (0.8.2+ skips it; 0.8.1 counts it improper);
 * - a line whose first non-blank character is `\` is escaped (0.8.2+): xxhsum drops the first
 *   character, parses the rest, then unescapes the name (`\\`, `\n`, `\r` only);
 * - split at the first space. If the next character is `(` it is BSD:
 *   `<ALG> (<name>) = <hex>` with the name ending at the last `) = `; the algorithm word is
 *   matched by prefix (XXH3, XXH32, XXH64, XXH128; anything else means XXH64) and `_LE`
 *   anywhere in it means little endian;
 * - otherwise GNU: `<hex> <any one character><name>`: xxhsum skips whatever character follows
 *   the first space (so `*name` binary markers work, and so does `hash x/abs/path`);
 *   8/16/32 hex digits (either case) or `XXH3_` + 16 (0.8.2+).
 */
export function parseChecksumFile(text: string): ChecksumFile {
  const entries: ChecksumFileEntry[] = [];
  const improper: ChecksumFile['improper'] = [];
  const comments: number[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop(); // the final newline ends the last line
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.startsWith('#')) {
      comments.push(line);
      return;
    }
    const result = parseChecksumLine(raw, line);
    if (typeof result === 'string') improper.push({ line, reason: result });
    else entries.push(result);
  });
  return { entries, improper, comments };
}

function isHex(s: string): boolean {
  return /^[0-9a-fA-F]+$/.test(s);
}

function parseChecksumLine(raw: string, line: number): ChecksumFileEntry | string {
  if (raw.includes('\0')) return 'contains a NUL byte';
  const escaped = /^[ \t]*\\/.test(raw);
  const body = escaped ? raw.slice(1) : raw;
  const firstSpace = body.indexOf(' ');
  if (firstSpace < 0 || firstSpace + 1 >= body.length) return 'no space-separated file name';

  let algorithm: XxhAlgorithm;
  let hash: string;
  let name: string;
  let style: 'gnu' | 'bsd';
  let littleEndian = false;

  if (body[firstSpace + 1] === '(') {
    style = 'bsd';
    const lastSpace = body.lastIndexOf(' ');
    if (lastSpace - firstSpace < 5 || body.slice(lastSpace - 3, lastSpace) !== ') =') {
      return 'BSD line without `) = <hash>`';
    }
    const word = body.slice(0, firstSpace);
    littleEndian = word.includes('_LE');
    algorithm = word.startsWith('XXH128')
      ? 'XXH128'
      : word.startsWith('XXH32')
        ? 'XXH32'
        : word.startsWith('XXH64')
          ? 'XXH64'
          : word.startsWith('XXH3')
            ? 'XXH3'
            : 'XXH64'; // xxhsum's default when the word is unknown
    hash = body.slice(lastSpace + 1);
    name = body.slice(firstSpace + 2, lastSpace - 3);
    if (hash.length !== HEX_LENGTH[algorithm] || !isHex(hash)) {
      return `${algorithm} hash must be ${HEX_LENGTH[algorithm]} hex digits`;
    }
  } else {
    style = 'gnu';
    const token = body.slice(0, firstSpace);
    if (token.length === 21 && token.startsWith('XXH3_') && isHex(token.slice(5))) {
      algorithm = 'XXH3';
      hash = token.slice(5);
    } else if (isHex(token) && (token.length === 8 || token.length === 16 || token.length === 32)) {
      algorithm = token.length === 8 ? 'XXH32' : token.length === 16 ? 'XXH64' : 'XXH128';
      hash = token;
    } else {
      return 'hash must be 8, 16 or 32 hex digits (or XXH3_ and 16)';
    }
    name = body.slice(firstSpace + 2);
  }

  if (escaped) {
    const unescaped = unescapeXxhName(name);
    if (unescaped === null) return 'invalid escape in file name';
    name = unescaped;
  }
  const entry: ChecksumFileEntry = { line, hash, fileName: name, algorithm, style, escaped };
  if (littleEndian) entry.littleEndian = true;
  return entry;
}

/**
 * The verify route's rule: every file named in the checksum file must be absolute, and (by
 * default) every line must be a checksum line or a comment, because 0.8.1 and 0.8.2+ disagree
 * on some lines and a line we call improper must not become a relative name xxhsum opens.
 * Answers with the first offending line so the route can say 400 "line N: ...".
 */
export function checkChecksumFile(file: ChecksumFile, options: { allowImproperLines?: boolean } = {}): CheckResult {
  const problems: { line: number; code: string; reason: string }[] = [];
  for (const e of file.entries) {
    if (!e.fileName.startsWith('/')) {
      problems.push({
        line: e.line,
        code: 'relative-file-name',
        reason: `line ${e.line}: file name ${JSON.stringify(e.fileName)} is not an absolute path`,
      });
    }
  }
  if (!options.allowImproperLines) {
    for (const p of file.improper) {
      problems.push({
        line: p.line,
        code: 'improper-line',
        reason: `line ${p.line}: not a checksum line (${p.reason})`,
      });
    }
  }
  if (file.entries.length === 0 && problems.length === 0) {
    return { ok: false, code: 'no-entries', reason: 'the checksum file holds no checksum lines' };
  }
  if (problems.length === 0) return { ok: true };
  problems.sort((a, b) => a.line - b.line);
  return { ok: false, code: problems[0].code, reason: problems[0].reason };
}
