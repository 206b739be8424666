/**
 * Every fixture under fixtures/tc against its hand-written `<name>.expected.json`.
 *
 * A successful read (`show`, exit 0) must have an expected file, so no capture goes unchecked;
 * mutating commands and failed reads have none (they are for route replay). An expected file of
 * the form {"ParseError": {parser, line}} says the parser must refuse the output at that line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { loadFixtureDir } from '../../../runtime/system/fixture-file';
import { ParseError } from '../../../handlers/core/parse-error';
import { ClassEntry, FilterEntry, QueueEntry } from '../../../handlers/traffic/schemas';
import { runTrafficParser, trafficParserFor } from './dispatch';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'tc');
const fixtures = loadFixtureDir(dir);

const LinkName = z.object({ name: z.string().min(1), loopback: z.boolean() }).strict();
const entrySchema = { 'tc-qdisc': QueueEntry, 'tc-class': ClassEntry, 'tc-filter': FilterEntry, 'tc-filter-text': FilterEntry, 'ip-link-names': LinkName } as const;

describe('fixtures/tc', () => {
  it('has the recorded and upstream captures', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    for (const f of fixtures) expect(f.source.length).toBeGreaterThan(20);
  });

  for (const f of fixtures) {
    const name = f.file!.slice(dir.length + 1).replace(/\.yaml$/, '');
    const expectedFile = join(dir, `${name}.expected.json`);
    const parser = trafficParserFor(f);

    if (!parser || (f.code !== 0 && !existsSync(expectedFile))) {
      it(`${name}: ${parser ? 'failed read' : 'command'}, no parse expected`, () => {
        expect(existsSync(expectedFile)).toBe(false);
        // The mutating fixtures are the plan's argv: they must start with the absolute binary.
        expect(f.argv[0]).toBe('/usr/sbin/tc');
      });
      continue;
    }

    it(`${name} (${parser})`, () => {
      expect(existsSync(expectedFile), `${name}.expected.json is missing`).toBe(true);
      const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as unknown;
      if (expected && typeof expected === 'object' && 'ParseError' in expected) {
        const want = (expected as { ParseError: { parser: string; line: number } }).ParseError;
        let err: unknown;
        try {
          runTrafficParser(parser, f);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(ParseError);
        expect((err as ParseError).parser).toBe(want.parser);
        expect((err as ParseError).line).toBe(want.line);
        expect((err as ParseError).message).toMatch(new RegExp(`line ${want.line}:`));
        return;
      }
      const got = runTrafficParser(parser, f);
      expect(got).toEqual(expected);
      // What the parser returns is what the schema accepts (the listing is validated with it).
      for (const entry of got as unknown[]) entrySchema[parser].parse(entry);
    });
  }
});

describe('the two readings of one capture agree', () => {
  const pairs: [json: string, text: string][] = [
    ['filter-two-rules', 'filter-text-two-rules'],
    ['filter-foreign-two-matches', 'filter-text-foreign-two-matches'],
    ['upstream-j-filter-show-u32', 'upstream-filter-show-u32'],
    ['upstream-j-filter-show-u32-two-matches', 'upstream-filter-show-u32-two-matches'],
  ];
  const byName = new Map(fixtures.map((f) => [f.file!.slice(dir.length + 1).replace(/\.yaml$/, ''), f]));
  for (const [j, t] of pairs) {
    it(`${j} (JSON, duplicate keys) == ${t} (text)`, () => {
      const fj = byName.get(j)!;
      const ft = byName.get(t)!;
      expect(runTrafficParser('tc-filter', fj)).toEqual(runTrafficParser('tc-filter-text', ft));
    });
  }

  it('the repeated "match" key comes out as every match, in order', () => {
    const f = byName.get('upstream-j-filter-show-u32-two-matches')!;
    // JSON.parse alone would lose the first match: the reason for json-multi.
    const naive = JSON.parse(f.stdout) as { options?: { match?: unknown } }[];
    expect(naive[2]!.options!.match).toEqual({ value: '1bd', mask: 'ffff', offmask: '', off: 20 });
    const [rule] = runTrafficParser('tc-filter', f) as FilterEntry[];
    expect(rule!.matches.map((m) => [m.field, m.address ?? m.port])).toEqual([
      ['dst', '192.168.1.50'],
      ['dport', 445],
    ]);
  });

  it('class text is the same with and without -j on iproute2 6.1', () => {
    expect(byName.get('class-j-two-rules')!.stdout).toBe(byName.get('class-two-rules')!.stdout);
  });
});
