/**
 * Compose text from a client (runtime/areas/pod/compose-yaml.ts): each hostile shape that cost
 * the host its event loop or its process is refused by its exact answer, and a compose file
 * reads as before. readYaml runs in-process here (what mutation testing runs per mutant: a
 * worker would run the text of a mutated function without Stryker's helpers);
 * pod-yaml-reader.test.ts runs it in the real worker thread.
 */
import * as yaml from 'yaml';
import { describe, expect, it } from 'vitest';
import { readYaml, YAML_MAX_ALIASES, YAML_MAX_DEPTH } from '../../runtime/areas/pod/compose-yaml';

const read = (text: string) => readYaml(yaml, text, YAML_MAX_DEPTH, YAML_MAX_ALIASES);
const json = (text: string) => {
  const r = read(text);
  return 'json' in r ? JSON.parse(r.json) : r;
};
const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('readYaml', () => {
  it('reads a compose file: merge keys, anchors, quoting, JSON text', () => {
    const text = [
      'x-base: &base {image: busybox, restart: "no"}',
      'services:',
      '  a:',
      '    <<: *base',
      "    command: ['sh', '-c', 'echo $$HOME']",
      '  b:',
      '    <<: *base',
      '    environment:',
      '      A: "1"',
    ].join('\n');
    expect(json(text)).toEqual({
      'x-base': { image: 'busybox', restart: 'no' },
      services: {
        a: { image: 'busybox', restart: 'no', command: ['sh', '-c', 'echo $$HOME'] },
        b: { image: 'busybox', restart: 'no', environment: { A: '1' } },
      },
    });
    expect(json('{"services": {"a": {"image": "x"}}}')).toEqual({ services: { a: { image: 'x' } } });
    expect(read('')).toEqual({ json: 'null' });
  });

  it(`refuses collections nested more than ${YAML_MAX_DEPTH} deep, flow or block, before yaml's composer recurses`, () => {
    expect(json(nested(YAML_MAX_DEPTH))).toEqual(JSON.parse(nested(YAML_MAX_DEPTH)));
    expect(read(nested(YAML_MAX_DEPTH + 1))).toEqual({
      message: `not usable YAML (line 1, column ${YAML_MAX_DEPTH + 1}): collections nested more than ${YAML_MAX_DEPTH} deep`,
    });
    // `- - - x`: each `- ` opens a sequence; the 65th is refused where it starts
    expect(read(`${'- '.repeat(YAML_MAX_DEPTH)}x`)).toEqual({
      json: `${'['.repeat(YAML_MAX_DEPTH)}"x"${']'.repeat(YAML_MAX_DEPTH)}`,
    });
    expect(read(`${'- '.repeat(YAML_MAX_DEPTH + 1)}x`)).toEqual({
      message: `not usable YAML (line 1, column ${2 * YAML_MAX_DEPTH + 1}): collections nested more than ${YAML_MAX_DEPTH} deep`,
    });
    // mappings count, and values on later lines: two mappings and 63 `[` are 65, the last refused
    const mapped = (n: number) => `a:\n  b: ${'['.repeat(n)}${']'.repeat(n)}\n`;
    expect('json' in read(mapped(YAML_MAX_DEPTH - 2))).toBe(true);
    expect(read(mapped(YAML_MAX_DEPTH - 1))).toEqual({
      message: `not usable YAML (line 2, column ${5 + YAML_MAX_DEPTH - 1}): collections nested more than ${YAML_MAX_DEPTH} deep`,
    });
    // what crashed Node 20 (a second stack overflow inside yaml) is now two quick refusals
    for (let i = 0; i < 2; i++) expect('message' in read('['.repeat(10_000))).toBe(true);
  });

  it('refuses a mapping key that is not a plain or quoted string, saying what it is and where', () => {
    const not = (line: number, column: number, what: string) => ({
      message: `not usable YAML (line ${line}, column ${column}): a mapping key must be a plain or quoted string, not ${what}`,
    });
    expect(read(`${'? '.repeat(400)}x`)).toEqual(not(1, 3, 'a collection'));
    expect(read('a: 1\n{[x]: 1}: 2\n')).toEqual(not(2, 1, 'a collection'));
    expect(read('a: {[x]: 1}\n')).toEqual(not(1, 5, 'a collection'));
    expect(read('x: &k key\n*k : 1\n')).toEqual(not(2, 1, 'an alias'));
    expect(read('? |\n  x\n: 1\n')).toEqual(not(1, 3, 'a block scalar'));
    expect(json('"a": 1\n\'b\': 2\n? c\n: 3\n')).toEqual({ a: 1, b: 2, c: 3 });
  });

  it('refuses a key twice in one mapping (as the document would have it), anywhere, in linear time', () => {
    const dup = (line: number, column: number) => ({
      message: `not valid YAML (line ${line}, column ${column}): Map keys must be unique`,
    });
    expect(read('a: 1\nb: 2\n"a": 3\n')).toEqual(dup(3, 1));
    expect(read('1: a\n"1": b\n')).toEqual(dup(2, 1));
    expect(read('s:\n  t: {x: 1, y: 2, x: 3}\n')).toEqual(dup(2, 19));
    // the same key in two mappings is no duplicate
    expect(json('a: {x: 1}\nb: {x: 2}\n')).toEqual({ a: { x: 1 }, b: { x: 2 } });
    const many = Array.from({ length: 20_000 }, (_, i) => `k${i}: ${i}`).join('\n');
    expect(Object.keys(json(many) as object)).toHaveLength(20_000);
    expect(read(`${many}\nk19999: 0\n`)).toEqual(dup(20_001, 1));
  });

  it(`expands aliases up to yaml's count of ${YAML_MAX_ALIASES}`, () => {
    const uses = (n: number) => `x: &a 1\ny: [${Array(n).fill('*a').join(', ')}]\n`;
    expect(json(uses(49))).toEqual({ x: 1, y: Array(49).fill(1) });
    expect(read(uses(50))).toEqual({
      message: 'not usable YAML: Excessive alias count indicates a resource exhaustion attack',
    });
  });

  it("says where yaml's own errors are, without yaml's own position at the end of the line", () => {
    const text = `${Array.from({ length: 12 }, (_, i) => `k${i}: v`).join('\n')}\nbadkey:      [a, b\n`;
    expect(read(text)).toEqual({
      message:
        'not valid YAML (line 14, column 1): Flow sequence in block collection must be sufficiently indented and end with a ]',
    });
    expect(read('services:\n  web:\n    image: a: b\n')).toEqual({
      message: 'not valid YAML (line 3, column 12): Nested mappings are not allowed in compact mappings',
    });
  });
});
