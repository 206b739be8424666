/**
 * Prints what the parsers make of Kerberos fixtures (klist/kinit YAML or krb5.conf files), as a
 * starting point for their `.expected.json`. The expected file must then be read against the
 * fixture and corrected by hand: it is a reviewed statement of what the output means, not a
 * snapshot.
 *
 *   npx vite-node test/tools/kerberos/draft-expected.ts fixtures/klist/local-tgt.yaml
 *   npx vite-node test/tools/kerberos/draft-expected.ts fixtures/krb5-conf/debian12-default.conf
 */
import { readFileSync } from 'node:fs';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseKrb5Conf } from '../../../handlers/kerberos/parse/krb5-conf';
import { fixtureOutcome } from '../../helpers/fixture-table';
import { KERBEROS_FIXTURES } from '../../parsers/fixture-tables';

for (const file of process.argv.slice(2)) {
  if (file.endsWith('.conf')) {
    console.log(JSON.stringify(parseKrb5Conf(readFileSync(file, 'utf8')), null, 2));
  } else {
    const f = readFixture(file);
    console.log(JSON.stringify(fixtureOutcome(KERBEROS_FIXTURES, f), null, 2));
  }
}
