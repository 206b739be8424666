/**
 * Every fixture under fixtures/tc against its hand-written `<name>.expected.json` (the table in
 * ../fixture-tables.ts, run by the one runner).
 *
 * A successful read (`show`, exit 0) must have an expected file, so no capture goes unchecked;
 * mutating commands and failed reads kept for route replay have none. An expected file of the
 * form {"parseError": {parser, line}} says the parser must refuse the output at that line.
 */
import { describe, expect, it } from 'vitest';
import { parseTcFilter, parseTcFilterText } from '../../../handlers/traffic/parse/tc-filter';
import { fixturePath, fixturesOf, runFixtureTable } from '../../helpers/fixture-runner';
import { TRAFFIC_FIXTURES } from '../fixture-tables';

runFixtureTable(TRAFFIC_FIXTURES);

const fixtures = fixturesOf(TRAFFIC_FIXTURES);

describe('the two readings of one capture agree', () => {
  const pairs: [json: string, text: string][] = [
    ['filter-two-rules', 'filter-text-two-rules'],
    ['filter-foreign-two-matches', 'filter-text-foreign-two-matches'],
    ['upstream-j-filter-show-u32', 'upstream-filter-show-u32'],
    ['upstream-j-filter-show-u32-two-matches', 'upstream-filter-show-u32-two-matches'],
  ];
  const byName = new Map(
    fixtures.map((f) => [
      fixturePath(f)
        .replace(/^tc\//, '')
        .replace(/\.yaml$/, ''),
      f,
    ]),
  );
  for (const [j, t] of pairs) {
    it(`${j} (JSON, duplicate keys) == ${t} (text)`, () => {
      const fj = byName.get(j)!;
      const ft = byName.get(t)!;
      expect(parseTcFilter(fj.stdout)).toEqual(parseTcFilterText(ft.stdout));
    });
  }

  it('the repeated "match" key comes out as every match, in order', () => {
    const f = byName.get('upstream-j-filter-show-u32-two-matches')!;
    // JSON.parse alone would lose the first match: the reason for json-multi.
    const naive = JSON.parse(f.stdout) as { options?: { match?: unknown } }[];
    expect(naive[2]!.options!.match).toEqual({ value: '1bd', mask: 'ffff', offmask: '', off: 20 });
    const [rule] = parseTcFilter(f.stdout);
    expect(rule!.matches.map((m) => [m.field, m.address ?? m.port])).toEqual([
      ['dst', '192.168.1.50'],
      ['dport', 445],
    ]);
  });

  it('class text is the same with and without -j on iproute2 6.1', () => {
    expect(byName.get('class-j-two-rules')!.stdout).toBe(byName.get('class-two-rules')!.stdout);
  });
});
