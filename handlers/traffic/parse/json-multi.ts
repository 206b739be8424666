import { ParseError } from '../../core/parse-error';

/**
 * A small JSON reader that keeps repeated object keys.
 *
 * Why: iproute2's json_writer prints one `"match":{...}` member per u32 key inside a single
 * filter object (6.1, and still in HEAD), so `JSON.parse` silently keeps only the last match.
 * Here an object is an ordered list of members, so every occurrence survives and callers choose
 * `all()` (keep every one) or `one()` (a repeat is an error, because it would mean we misread).
 *
 * Errors are ParseErrors naming the line and column, never echoing the input (tc output may be
 * long; other callers' input may hold secrets).
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

export interface JsonMember {
  readonly key: string;
  readonly value: JsonValue;
  /** 1-based line of the key, for error messages */
  readonly line: number;
}

export class JsonObject {
  constructor(
    readonly members: readonly JsonMember[],
    /** 1-based line of the opening brace */
    readonly line: number,
  ) {}

  /** Every value stored under `key`, in document order (empty when absent). */
  all(key: string): JsonValue[] {
    return this.members.filter((m) => m.key === key).map((m) => m.value);
  }

  has(key: string): boolean {
    return this.members.some((m) => m.key === key);
  }

  /** The value under `key`; undefined when absent; a ParseError when the key repeats. */
  one(key: string, parser: string): JsonValue | undefined {
    const found = this.members.filter((m) => m.key === key);
    if (found.length > 1) {
      throw new ParseError(parser, `key "${key}" appears ${found.length} times in one object`, found[1]!.line);
    }
    return found[0]?.value;
  }

  keys(): string[] {
    return this.members.map((m) => m.key);
  }
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return v instanceof JsonObject;
}

/** Nesting deeper than this is not tc output; refusing it also bounds the recursion. */
const MAX_DEPTH = 64;

/** Parse one JSON document (surrounding whitespace allowed, nothing else). */
export function parseJsonMulti(text: string, parser: string): JsonValue {
  let pos = 0;
  let line = 1;
  let lineStart = 0;

  const fail = (message: string, at = pos): never => {
    // Recompute the line for `at` only when it differs from the cursor (rare: error paths only).
    let l = line;
    let ls = lineStart;
    if (at !== pos) {
      l = 1;
      ls = 0;
      for (let i = 0; i < at && i < text.length; i++) {
        if (text[i] === '\n') {
          l++;
          ls = i + 1;
        }
      }
    }
    throw new ParseError(parser, `${message} (column ${at - ls + 1})`, l);
  };

  const describe = (i: number): string => (i >= text.length ? 'end of input' : `character ${JSON.stringify(text[i])}`);

  const skipWs = () => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x0a) {
        pos++;
        line++;
        lineStart = pos;
      } else if (c === 0x20 || c === 0x09 || c === 0x0d) pos++;
      else return;
    }
  };

  const expect = (ch: string) => {
    if (text[pos] !== ch) fail(`expected ${JSON.stringify(ch)} but found ${describe(pos)}`);
    pos++;
  };

  const parseString = (): string => {
    expect('"');
    let out = '';
    let chunkStart = pos;
    for (;;) {
      if (pos >= text.length) fail('unterminated string');
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        out += text.slice(chunkStart, pos);
        pos++;
        return out;
      }
      if (c < 0x20) fail('control character inside a string');
      if (c === 0x5c) {
        out += text.slice(chunkStart, pos);
        const e = text[pos + 1];
        pos += 2;
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          case 'u': {
            const hex = text.slice(pos, pos + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
            out += String.fromCharCode(parseInt(hex, 16));
            pos += 4;
            break;
          }
          default:
            fail('bad escape in string', pos - 1);
        }
        chunkStart = pos;
        continue;
      }
      pos++;
    }
  };

  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

  const parseValue = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    skipWs();
    const c = text[pos];
    if (c === '{') return parseObject(depth);
    if (c === '[') return parseArray(depth);
    if (c === '"') return parseString();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(text);
      if (!m) return fail(`bad number`);
      pos += m[0].length;
      return Number(m[0]);
    }
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return value;
      }
    }
    return fail(`unexpected ${describe(pos)}`);
  };

  const parseArray = (depth: number): JsonValue[] => {
    expect('[');
    const out: JsonValue[] = [];
    skipWs();
    if (text[pos] === ']') {
      pos++;
      return out;
    }
    for (;;) {
      out.push(parseValue(depth + 1));
      skipWs();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === ']') {
        pos++;
        return out;
      }
      fail(`expected "," or "]" but found ${describe(pos)}`);
    }
  };

  const parseObject = (depth: number): JsonObject => {
    const startLine = line;
    expect('{');
    const members: JsonMember[] = [];
    skipWs();
    if (text[pos] === '}') {
      pos++;
      return new JsonObject(members, startLine);
    }
    for (;;) {
      skipWs();
      const keyLine = line;
      if (text[pos] !== '"') fail(`expected a key but found ${describe(pos)}`);
      const key = parseString();
      skipWs();
      expect(':');
      const value = parseValue(depth + 1);
      members.push({ key, value, line: keyLine });
      skipWs();
      if (text[pos] === ',') {
        pos++;
        continue;
      }
      if (text[pos] === '}') {
        pos++;
        return new JsonObject(members, startLine);
      }
      fail(`expected "," or "}" but found ${describe(pos)}`);
    }
  };

  skipWs();
  if (pos >= text.length) fail('empty output, expected JSON');
  const value = parseValue(0);
  skipWs();
  if (pos < text.length) fail(`unexpected ${describe(pos)} after the JSON document`);
  return value;
}
