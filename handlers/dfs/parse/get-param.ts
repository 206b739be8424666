/**
 * `lctl get_param` / `set_param` / `list_param` output and the single values `get_param -n` prints.
 * - `name=value` per parameter; a multi-line value prints `name=` (or `name=<first line>`, e.g. an
 *   unhealthy `health_check`) and then raw lines until the next `name=` line. A parameter name is
 *   dotted and has no whitespace (`mdt.fs-MDT0000.exports.10.0.0.1@tcp.uuid`); body lines never
 *   start like one (stats, brw_stats, health_check lines have spaces or no `=`).
 * - `-n` prints values only, so one value per call: `valueOf`.
 */
import { parse as parseYaml } from 'yaml';
import { ParseError } from '../../core/parse-error';

export interface Param {
  name: string;
  value: string;
}

const PARAM_LINE = /^([A-Za-z0-9_][A-Za-z0-9_.@:*+-]*)=(.*)$/;

export function parseGetParam(text: string): Param[] {
  const out: Param[] = [];
  const lines = text.replace(/\n$/, '').split('\n');
  let cur: { name: string; lines: string[] } | undefined;
  const flush = () => {
    if (!cur) return;
    while (cur.lines.length > 1 && cur.lines[cur.lines.length - 1].trim() === '') cur.lines.pop();
    const [first, ...rest] = cur.lines;
    // `name=` + body: the value is the body; `name=v` + more lines: all of them
    const value = first === '' ? rest.join('\n') : cur.lines.join('\n');
    out.push({ name: cur.name, value });
  };
  lines.forEach((line, i) => {
    const m = PARAM_LINE.exec(line);
    if (m && !/\s/.test(m[1])) {
      flush();
      cur = { name: m[1], lines: [m[2]] };
      return;
    }
    if (!cur) {
      if (line.trim() === '') return;
      throw new ParseError('lctl get_param', 'output does not start with name=value', i + 1);
    }
    cur.lines.push(line);
  });
  flush();
  if (out.length === 0 && text.trim() !== '') throw new ParseError('lctl get_param', 'no name=value line');
  return out;
}

/** The value of `name` (exact), or undefined. */
export function paramValue(params: Param[], name: string): string | undefined {
  return params.find((p) => p.name === name)?.value;
}

/** `get_param -n` of one parameter: the text without its final newline. */
export function valueOf(text: string): string {
  return text.replace(/\n$/, '');
}

/** A `-n` value that must be one integer (kbytes*, blocksize, filesfree…). */
export function intValue(text: string, what: string): number {
  const v = valueOf(text).trim();
  if (!/^\d+$/.test(v))
    throw new ParseError('lctl get_param', `${what} is not an integer: ${JSON.stringify(v.slice(0, 40))}`);
  return Number(v);
}

/** `mgc.*.mgs_server_uuid`: `MGS<TAB>FULL` (server uuid, import state). */
export function parseMgsServerUuid(text: string): { uuid: string; state: string } {
  const m = /^(\S+)\s+([A-Z_]+)$/.exec(valueOf(text).trim());
  if (!m) throw new ParseError('lctl get_param mgs_server_uuid', 'expected "<uuid><TAB><state>"');
  return { uuid: m[1], state: m[2] };
}

/** `mgs.MGS.filesystems` (one fsname per line) and `list_param`/`list_nids` (one name per line). */
export function parseNameList(
  text: string,
  what = 'lctl get_param filesystems',
  re = /^[A-Za-z0-9_][A-Za-z0-9_.@:*-]*$/,
): string[] {
  const out: string[] = [];
  text.split('\n').forEach((l, i) => {
    const s = l.trim();
    if (s === '') return;
    if (!re.test(s)) throw new ParseError(what, `not a name: ${JSON.stringify(s.slice(0, 40))}`, i + 1);
    out.push(s);
  });
  return out;
}

export interface MgsLive {
  fsname: string;
  flags: string;
  gen: number;
  targets: string[];
  imperative_recovery_state: Record<string, unknown>;
}

/**
 * `mgs.MGS.live.<fs>`: NOT YAML at the top — `fsname:`, `flags: 0x20     gen: N` (two keys on one
 * line), bare target names, a blank line, `Secure RPC Config Rules:` (+ rules), then an
 * `imperative_recovery_state:` YAML block (upstream's typo `notify_duation_max` kept).
 */
export function parseMgsLive(text: string): MgsLive {
  const lines = text.split('\n');
  const fs = /^fsname:\s*(\S+)$/.exec(lines[0] ?? '');
  const fl = /^flags:\s*(0x[0-9a-fA-F]+)\s+gen:\s*(\d+)$/.exec(lines[1] ?? '');
  if (!fs) throw new ParseError('mgs live', 'expected "fsname: <name>"', 1);
  if (!fl) throw new ParseError('mgs live', 'expected "flags: 0x.. gen: N"', 2);
  const targets: string[] = [];
  let i = 2;
  for (; i < lines.length && lines[i].trim() !== ''; i++) {
    if (!/^[A-Za-z0-9_]+-(MDT|OST)[0-9a-fA-F]{4}$/.test(lines[i].trim()))
      throw new ParseError('mgs live', `not a target name: ${JSON.stringify(lines[i].slice(0, 40))}`, i + 1);
    targets.push(lines[i].trim());
  }
  const irs = lines.findIndex((l) => l.startsWith('imperative_recovery_state:'));
  let state: Record<string, unknown> = {};
  if (irs >= 0) {
    const doc = parseYaml(lines.slice(irs).join('\n')) as {
      imperative_recovery_state?: Record<string, unknown>;
    } | null;
    state = doc?.imperative_recovery_state ?? {};
  }
  return { fsname: fs[1], flags: fl[1], gen: Number(fl[2]), targets, imperative_recovery_state: state };
}

/** `mgc.*.import` / `osc.*.import`: YAML with flow lists and 3-space nesting. */
export function parseImport(text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ParseError(
      'lctl get_param import',
      `not YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    );
  }
  const imp = (doc as { import?: unknown } | null)?.import;
  if (!imp || typeof imp !== 'object') throw new ParseError('lctl get_param import', 'no import: block');
  return imp as Record<string, unknown>;
}

/**
 * `head`-style concatenation of single-value procfs files (`==> path <==` then the value), how
 * the HP exporter fixture of osd-zfs values is stored: path → value.
 */
export function parseHeadConcatenation(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let cur: string | undefined;
  text.split('\n').forEach((l, i) => {
    const m = /^==> (.+) <==$/.exec(l);
    if (m) {
      cur = m[1];
      out[cur] = '';
      return;
    }
    if (cur === undefined) {
      if (l.trim() === '') return;
      throw new ParseError('procfs values', 'value before any "==> path <==" header', i + 1);
    }
    out[cur] = out[cur] === '' ? l : `${out[cur]}\n${l}`;
  });
  for (const k of Object.keys(out)) out[k] = out[k].replace(/\n+$/, '');
  return out;
}

/** `key: value` lines (a grep of `recovery_status`, `lfs check servers`). */
export function parseColonLines(text: string, what: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    const m = /^([^:\s][^:]*?):\s+(.*?)\s*$/.exec(l);
    if (!m) throw new ParseError(what, 'expected "key: value"', i + 1);
    out.push({ key: m[1], value: m[2] });
  });
  return out;
}

/** `error: set_param: setting <path>=<v>: <strerror>` (stderr of a failed set_param). */
export function parseSetParamError(text: string): { path: string; value: string; error: string } {
  const m = /^error: set_param: setting ([^=\s]+)=(\S*): (.+)$/m.exec(text);
  if (!m) throw new ParseError('lctl set_param', 'not a set_param error line');
  return { path: m[1], value: m[2], error: m[3].trim() };
}

/** `health_check`: `healthy`, or `device X reported unhealthy` lines and `NOT HEALTHY`. */
export function parseHealthCheck(value: string): { healthy: boolean; unhealthy: string[] } {
  const lines = value
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 1 && lines[0] === 'healthy') return { healthy: true, unhealthy: [] };
  const unhealthy: string[] = [];
  for (const l of lines) {
    const m = /^device (\S+) reported unhealthy$/.exec(l);
    if (m) unhealthy.push(m[1]);
    else if (l !== 'NOT HEALTHY' && l !== 'LBUG')
      throw new ParseError('health_check', `unexpected line ${JSON.stringify(l.slice(0, 40))}`);
  }
  return { healthy: false, unhealthy };
}
