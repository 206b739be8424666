import { kerberosSettings, type KerberosSettings } from '../../handlers/kerberos/contract';
import { defineArea } from './types';
import { kerberosCommandPolicies } from './kerberos/policies';

/** Kerberos: configuration files, keytab and the ticket cache the routes work on. */
export default defineArea<KerberosSettings>({
  name: 'kerberos',
  settings: kerberosSettings,
  // every Kerberos command runs with these set to the configured paths (handlers/kerberos/commands.ts)
  envAllow: ['KRB5_CONFIG', 'KRB5CCNAME', 'KRB5_KTNAME', 'KRB5_CLIENT_KTNAME'],
  setup: (host) => ({
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
