/** What the Kerberos commands may touch: keytabs only under the configured keytab roots. */
import { operandsAfterDashDash, type CommandPolicy } from '../../system/confine';

export const kerberosCommandPolicies: Record<string, CommandPolicy> = {
  // kinit [-k -t <keytab>] [-- <principal>]
  kinit: (argv) => {
    const k = argv.indexOf('-k');
    if (k < 0) return [];
    const t = argv.indexOf('-t');
    if (t < 0 || t + 1 >= argv.length) return 'kinit -k needs -t <keytab>';
    return [{ path: argv[t + 1], kind: 'kerberos.keytab', argvIndex: t + 1 }];
  },
  // klist [-k -t -e -- <keytab>]
  klist: (argv) => {
    if (!argv.includes('-k')) return [];
    const ops = operandsAfterDashDash(argv);
    if (!ops || ops.length !== 1) return 'klist -k needs -- <keytab>';
    return [{ path: ops[0].value, kind: 'kerberos.keytab', argvIndex: ops[0].index }];
  },
};
