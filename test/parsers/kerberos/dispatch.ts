/**
 * Which parser reads a Kerberos fixture, decided from its argv and exit code the same way a
 * route decides it: a failed command (or any kinit, whose only output worth reading is an
 * error) is read from stderr by parseKrb5Error; a successful klist by the parser for its mode.
 */
import type { Fixture } from '../../../runtime/system/fixture-file';
import { parseKeytabList, parseKlist, parseKlistCollection } from '../../../handlers/kerberos/parse/klist';
import { parseKrb5Error } from '../../../handlers/kerberos/parse/krb5-error';

export type KerberosParser = 'klist' | 'keytab' | 'collection' | 'error';

export function parserFor(f: Pick<Fixture, 'argv' | 'code'>): KerberosParser {
  if (f.code !== 0 || f.argv[0].endsWith('/kinit')) return 'error';
  if (f.argv.includes('-k')) return 'keytab';
  if (f.argv.includes('-l')) return 'collection';
  return 'klist';
}

export function runParser(p: KerberosParser, f: Pick<Fixture, 'stdout' | 'stderr'>): unknown {
  switch (p) {
    case 'klist':
      return parseKlist(f.stdout);
    case 'keytab':
      return parseKeytabList(f.stdout);
    case 'collection':
      return parseKlistCollection(f.stdout);
    case 'error':
      return parseKrb5Error(f.stderr, f.stdout);
  }
}
