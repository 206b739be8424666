import { join, resolve } from 'node:path';
import {
  PIECES,
  PIECE_DEFAULT_PATH,
  PIECE_PATH_KEY,
  TRUST_PATHS,
  certificateSettings,
  updateArgv,
  type CertificateSettings,
  type Piece,
} from '../../handlers/certificate/contract';
import { defineArea } from './types';
import { certificateOps, TlsManager } from './certificate/ops';
import { TlsFileStore } from './certificate/tls-store';
import { TrustStore, trustIntentFile, trustOps } from './certificate/trust-store';

/**
 * Certificates: the system trust store (update-ca-certificates on `paths.caCertificates`) and the
 * appliance's own TLS pieces with the durable commit window (certificate/tls-store.ts). The
 * host's `tls:` section should name the same files (`cert` = tlsServer, `key` = tlsPrivateKey,
 * `chain` = tlsIntermediate) so that ingest and regenerate change what HTTPS serves.
 */
export default defineArea<CertificateSettings>({
  name: 'certificate',
  settings: certificateSettings,
  paths: {
    caCertificates: { default: TRUST_PATHS.caCertificates, kind: 'dir' },
    caCertificatesConf: { default: TRUST_PATHS.caCertificatesConf, kind: 'file', readOnly: true },
    caCertificatesShare: { default: TRUST_PATHS.caCertificatesShare, kind: 'dir', readOnly: true },
    sslCerts: { default: TRUST_PATHS.sslCerts, kind: 'dir', readOnly: true },
    caCertificatesHooks: { default: TRUST_PATHS.caCertificatesHooks, kind: 'dir', readOnly: true },
    tlsRoot: { default: PIECE_DEFAULT_PATH.root, kind: 'file' },
    tlsIntermediate: { default: PIECE_DEFAULT_PATH.intermediate, kind: 'file' },
    tlsServer: { default: PIECE_DEFAULT_PATH.server, kind: 'file' },
    tlsPrivateKey: { default: PIECE_DEFAULT_PATH.private_key, kind: 'file' },
  },
  binaries: {
    updateCaCertificates: '/usr/sbin/update-ca-certificates',
    openssl: '/usr/bin/openssl',
    systemctl: '/usr/bin/systemctl',
  },
  setup(host) {
    const paths = Object.fromEntries(PIECES.map((p) => [p, host.config.paths[PIECE_PATH_KEY[p]]])) as Record<
      Piece,
      string
    >;
    const tls = host.config.tls;
    if (
      tls &&
      (tls.cert !== paths.server ||
        tls.key !== paths.private_key ||
        (tls.chain ?? paths.intermediate) !== paths.intermediate)
    ) {
      host.log(
        `certificate: the tls section serves ${tls.cert} / ${tls.key}, not paths.tlsServer / tlsPrivateKey / tlsIntermediate (${paths.server}, ${paths.private_key}, ${paths.intermediate}); ingest and regenerate will not change what HTTPS serves`,
      );
    }
    const store = new TlsFileStore({ paths, dir: join(resolve(host.config.stateDir), 'certificate') });
    const manager = new TlsManager({
      store,
      settings: host.settings,
      db: host.db,
      events: host.events,
      system: host.system,
      openssl: host.config.system.binaries.openssl ?? '/usr/bin/openssl',
      reloadTls: () => host.reloadTls(),
      log: host.log,
    });
    // before the server reads the certificate: a window that ran out while the host was down is
    // rolled back now, a pending one gets its timer back
    try {
      manager.recover();
    } catch (e) {
      host.log(`certificate: could not recover the TLS commit window: ${e instanceof Error ? e.message : String(e)}`);
    }
    // the trust store: a change a killed host left is settled before the next one runs
    const trust = new TrustStore({
      localDir: host.config.paths.caCertificates,
      etcDir: host.config.paths.sslCerts,
      intentFile: trustIntentFile(host.config.stateDir),
      argv: (fresh) => updateArgv(host.vars, fresh),
      timeoutMs: host.settings.trustTimeoutMs,
      system: host.system,
      events: host.events,
      db: host.db,
      log: host.log,
    });
    try {
      trust.recover();
    } catch (e) {
      host.log(`certificate: could not settle the trust store: ${e instanceof Error ? e.message : String(e)}`);
    }
    return {
      ops: { ...certificateOps(manager, host.config.paths.caCertificates), ...trustOps(trust) },
      onStop: async () => {
        manager.stop();
        await trust.idle();
      },
    };
  },
});
