import { mkdir, stat } from 'node:fs/promises';
import { ENSURE_CONF_DIR_OP, kerberosSettings, type KerberosSettings } from '../../handlers/kerberos/contract';
import { SystemRefusal } from '../system/types';
import { defineArea } from './types';
import { kerberosCommandPolicies } from './kerberos/policies';
import { opAudit } from '../db/audit';

/** Kerberos: configuration files, keytab and the ticket cache the routes work on. */
export default defineArea<KerberosSettings>({
  name: 'kerberos',
  settings: kerberosSettings,
  // every Kerberos command runs with these set to the configured paths (handlers/kerberos/commands.ts)
  envAllow: ['KRB5_CONFIG', 'KRB5CCNAME', 'KRB5_KTNAME', 'KRB5_CLIENT_KTNAME'],
  binaries: { kinit: '/usr/bin/kinit', klist: '/usr/bin/klist', kdestroy: '/usr/bin/kdestroy' },
  setup: (host) => ({
    ops: {
      [ENSURE_CONF_DIR_OP]: async (_payload, requestId) => {
        const dir = host.config.paths.krb5ConfD;
        const st = await stat(dir).catch(() => null);
        if (st && !st.isDirectory()) throw new SystemRefusal('conflict', `${dir} exists and is not a directory`);
        if (st) return { created: false };
        await mkdir(dir, { recursive: true, mode: 0o755 });
        opAudit(host.db)({ kind: ENSURE_CONF_DIR_OP, requestId, argv: [dir], note: 'created' });
        return { created: true };
      },
    },
    confine: {
      roots: { 'kerberos.keytab': [host.config.paths.keytab, ...host.settings.keytabRoots] },
      commands: kerberosCommandPolicies,
    },
  }),
  paths: {
    krb5Conf: { default: '/etc/krb5.conf', kind: 'file' },
    krb5ConfD: { default: '/etc/krb5.conf.d', kind: 'dir' },
    keytab: { default: '/etc/krb5.keytab', kind: 'file' },
    krb5Ccache: { default: '/tmp/krb5cc_0', kind: 'file' },
  },
});
