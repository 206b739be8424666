/**
 * `lctl get_param` output (device details, the MGS record): `name=value` per parameter; a
 * multi-line value prints `name=` (or `name=<first line>`, e.g. an unhealthy `health_check`) and
 * then raw lines until the next `name=` line. A parameter name is dotted and has no whitespace
 * (`mdt.fs-MDT0000.exports.10.0.0.1@tcp.uuid`); body lines never start like one (stats,
 * brw_stats, health_check lines have spaces or no `=`).
 */
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
