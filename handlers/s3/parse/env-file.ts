/**
 * Reads an environment file the way systemd's EnvironmentFile= does (systemd.exec(5)): `NAME=value`
 * lines; blank lines and lines starting with `#` or `;` are comments; a value may be
 * double-quoted (escapes `\"` `\\` `` \` `` `\$`, backslash-newline continues, any other backslash
 * is kept), single-quoted (verbatim) or bare (a backslash keeps the next character, leading and
 * trailing blanks dropped). Lines without `=` are ignored, as systemd does. An unterminated quote
 * or text after a closing quote is a ParseError naming the line (never the value: it may be a secret).
 */
import { ParseError } from '../../core/parse-error';

const P = 'environment file';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseEnvFile(text: string): Record<string, string> {
  if (text.includes('\0')) throw new ParseError(P, 'contains a NUL byte');
  const out: Record<string, string> = {};
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    // start of a line
    const lineStart = line;
    let j = i;
    while (j < n && (text[j] === ' ' || text[j] === '\t')) j++;
    if (j >= n) break;
    if (text[j] === '\n' || text[j] === '\r' || text[j] === '#' || text[j] === ';') {
      const end = text.indexOf('\n', j);
      if (end < 0) break;
      i = end + 1;
      line++;
      continue;
    }
    const eol = text.indexOf('\n', j);
    const lineEnd = eol < 0 ? n : eol;
    const eq = text.indexOf('=', j);
    if (eq < 0 || eq > lineEnd) {
      i = lineEnd + 1;
      line++;
      continue;
    }
    const name = text.slice(j, eq).trim();
    if (!NAME.test(name)) throw new ParseError(P, 'a variable name must be letters, digits and _', lineStart);
    let k = eq + 1;
    while (k < n && (text[k] === ' ' || text[k] === '\t')) k++;
    let value = '';
    if (text[k] === '"' || text[k] === "'") {
      const q = text[k];
      k++;
      let closed = false;
      while (k < n) {
        const c = text[k];
        if (c === q) {
          closed = true;
          k++;
          break;
        }
        if (c === '\n') line++;
        if (q === '"' && c === '\\' && k + 1 < n) {
          const d = text[k + 1];
          if (d === '\n') {
            line++;
          } else if (d === '"' || d === '\\' || d === '`' || d === '$') {
            value += d;
          } else {
            value += c + d;
          }
          k += 2;
          continue;
        }
        value += c;
        k++;
      }
      if (!closed) throw new ParseError(P, 'unterminated quoted value', lineStart);
      while (k < n && text[k] !== '\n') {
        if (text[k] !== ' ' && text[k] !== '\t' && text[k] !== '\r')
          throw new ParseError(P, 'text after the closing quote', line);
        k++;
      }
    } else {
      while (k < n && text[k] !== '\n') {
        const c = text[k];
        if (c === '\\' && k + 1 < n) {
          if (text[k + 1] === '\n') line++;
          else value += text[k + 1];
          k += 2;
          continue;
        }
        value += c;
        k++;
      }
      value = value.replace(/[ \t\r]+$/, '');
    }
    out[name] = value;
    i = k + 1;
    line++;
  }
  return out;
}
