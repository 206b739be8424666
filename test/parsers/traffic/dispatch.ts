/**
 * Which traffic parser reads which recorded invocation, decided by argv exactly as a route would:
 * `tc -j qdisc show` -> qdisc JSON; `tc [-s] [-j] class show` -> class text (6.1 ignores -j);
 * `tc -j filter show` -> filter JSON; `tc filter show` -> filter text. Mutating commands
 * (add/replace/del) have no parser.
 */
import type { Fixture } from '../../../runtime/system/fixture-file';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../../handlers/traffic/parse/tc-class';
import { parseTcFilter, parseTcFilterText } from '../../../handlers/traffic/parse/tc-filter';
import { parseIpLinkNames } from '../../../handlers/traffic/parse/ip-link-names';

export type TrafficParser = 'tc-qdisc' | 'tc-class' | 'tc-filter' | 'tc-filter-text' | 'ip-link-names';

export function trafficParserFor(f: Fixture): TrafficParser | null {
  const [bin, ...args] = f.argv;
  // The listing's one non-tc read: which devices exist (fixtures/tc/routes/ip-link-show.yaml).
  if (bin === '/usr/sbin/ip' && args.join(' ') === '-j link show') return 'ip-link-names';
  if (bin !== '/usr/sbin/tc') throw new Error(`not a tc fixture: ${f.argv.join(' ')} (${f.file ?? '?'})`);
  if (!args.includes('show')) return null;
  if (args.includes('qdisc')) {
    if (!args.includes('-j')) throw new Error(`text qdisc output has no parser: ${f.file ?? '?'}`);
    return 'tc-qdisc';
  }
  if (args.includes('class')) return 'tc-class';
  if (args.includes('filter')) return args.includes('-j') ? 'tc-filter' : 'tc-filter-text';
  throw new Error(`no traffic parser for ${f.argv.join(' ')} (${f.file ?? '?'})`);
}

/** The device a `... show dev X` asked about (qdisc JSON omits it then). */
export function deviceOf(f: Fixture): string | undefined {
  const i = f.argv.indexOf('dev');
  return i >= 0 ? f.argv[i + 1] : undefined;
}

export function runTrafficParser(name: TrafficParser, f: Fixture): unknown {
  switch (name) {
    case 'tc-qdisc':
      return parseTcQdisc(f.stdout, deviceOf(f));
    case 'tc-class':
      return parseTcClass(f.stdout);
    case 'tc-filter':
      return parseTcFilter(f.stdout);
    case 'tc-filter-text':
      return parseTcFilterText(f.stdout);
    case 'ip-link-names':
      return parseIpLinkNames(f.stdout);
  }
}
