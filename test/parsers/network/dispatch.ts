/**
 * Which parser reads which recorded invocation, decided by argv exactly as a route would.
 * Shared by the fixture tests and test/tools/network/draft-expected.ts.
 */
import type { Fixture } from '../../../runtime/system/fixture-file';
import { parseIpLink } from '../../../handlers/network/parse/ip-link';
import { parseIpAddr } from '../../../handlers/network/parse/ip-addr';
import { parseEthtool, parseEthtoolDriver } from '../../../handlers/network/parse/ethtool';

export type ParserName = 'ip-link' | 'ip-addr' | 'ethtool' | 'ethtool-i';

export function parserFor(f: Fixture): ParserName {
  const [bin, ...args] = f.argv;
  if (bin === '/usr/sbin/ip') {
    if (args.includes('link')) return 'ip-link';
    if (args.includes('addr')) return 'ip-addr';
  }
  if (bin === '/usr/sbin/ethtool') return args[0] === '-i' ? 'ethtool-i' : 'ethtool';
  throw new Error(`no network parser for ${f.argv.join(' ')} (${f.file ?? '?'})`);
}

export function runParser(name: ParserName, stdout: string): unknown {
  switch (name) {
    case 'ip-link':
      return parseIpLink(stdout);
    case 'ip-addr':
      return parseIpAddr(stdout);
    case 'ethtool':
      return parseEthtool(stdout);
    case 'ethtool-i':
      return parseEthtoolDriver(stdout);
  }
}
