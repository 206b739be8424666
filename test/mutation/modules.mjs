/**
 * The security and durability modules `npm run mutate` measures (#35), each with the code it
 * mutates and the test files that run against its mutants: the fast tiers that exercise it from
 * source (a test that goes through the built bundles in dist/ never sees a mutant).
 */
import { readFileSync } from 'node:fs';

/**
 * `file:first-last`: the lines from the one starting with `from` to the one before `to` (a
 * Stryker mutation range found by text, so it follows the code when lines move).
 */
function range(file, from, to) {
  const lines = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').split('\n');
  const a = lines.findIndex((l) => l.startsWith(from));
  const b = lines.findIndex((l, i) => i > a && l.startsWith(to));
  if (a < 0 || b < 0) throw new Error(`mutation range of ${file}: no line starting with ${a < 0 ? from : to}`);
  return `${file}:${a + 1}-${b}`;
}

export const MODULES = {
  auth: {
    mutate: ['handlers/core/auth.ts', 'handlers/core/hop.ts'],
    tests: ['test/host/auth.test.ts', 'test/host/security-edges.test.ts', 'test/host/hop-tokens.test.ts'],
  },
  errors: {
    mutate: ['handlers/core/errors.ts'],
    tests: ['test/host/errors.test.ts', 'test/routes/core-contract.test.ts', 'test/host/system-service.test.ts'],
  },
  route: {
    mutate: ['handlers/core/route.ts'],
    tests: ['test/host/route-core.test.ts', 'test/routes/core-contract.test.ts', 'test/routes/query-keys.test.ts'],
  },
  confine: {
    mutate: ['runtime/system/confine.ts', 'handlers/core/paths.ts'],
    tests: [
      'test/host/confine.test.ts',
      'test/host/security-edges.test.ts',
      'test/parsers/core-paths.test.ts',
      'test/host/files-hardening.test.ts',
    ],
  },
  files: {
    mutate: ['runtime/system/files.ts'],
    tests: [
      'test/host/system-files.test.ts',
      'test/host/system-files-disk.test.ts',
      'test/host/files-hardening.test.ts',
      'test/host/security-edges.test.ts',
    ],
  },
  journal: {
    mutate: ['runtime/system/journal.ts'],
    tests: ['test/host/journal.test.ts', 'test/host/security-edges.test.ts', 'test/host/journal-recovery.test.ts'],
  },
  service: {
    mutate: ['runtime/system/service.ts'],
    tests: [
      'test/host/system-service.test.ts',
      'test/host/system-service-ops.test.ts',
      'test/host/direct-bindings.test.ts',
    ],
  },
  // the pod admission code in three runs (1,700 mutants in one run take hours on this machine)
  'pod-policy': {
    mutate: ['runtime/areas/pod/admission/policy.ts', 'runtime/areas/pod/admission/host-paths.ts'],
    tests: [
      'test/routes/pod-policy-table.test.ts',
      'test/routes/pod-admit-table.test.ts',
      'test/routes/pod-admission.test.ts',
      'test/routes/pod-compose-check.test.ts',
    ],
  },
  'pod-admit': {
    mutate: ['runtime/areas/pod/admission/admit.ts'],
    tests: [
      'test/routes/pod-admit-table.test.ts',
      'test/routes/pod-admission.test.ts',
      'test/routes/pod-compose-check.test.ts',
    ],
  },
  'pod-compose-check': {
    mutate: ['runtime/areas/pod/compose-check.ts'],
    tests: [
      'test/routes/pod-compose-edges.test.ts',
      'test/routes/pod-admission.test.ts',
      'test/routes/pod-compose-check.test.ts',
    ],
  },
  // a client's compose text: the CST walk, the duplicate keys, the aliases (worker-free: readYaml)
  'pod-compose-yaml': {
    mutate: ['runtime/areas/pod/compose-yaml.ts'],
    tests: ['test/routes/pod-compose-yaml.test.ts'],
  },
  // TlsManager up to regenerate: the window (ingest, commit, expiry, recovery, rollback)
  'certificate-window': {
    mutate: [range('runtime/areas/certificate/ops.ts', 'export class TlsManager', '  regenerate(')],
    tests: ['test/host/certificate-window.test.ts', 'test/host/certificate-window-trail.test.ts'],
  },
  'notification-worker': {
    mutate: ['runtime/areas/notification/worker.ts'],
    tests: [
      'test/host/notification-worker.test.ts',
      'test/host/notification-queue.test.ts',
      'test/host/notification-prune.test.ts',
    ],
  },
  // the binding socket: its secret, its ops and their limits
  'binding-socket': {
    mutate: ['runtime/bindings/socket.ts'],
    tests: ['test/host/binding-socket.test.ts', 'test/edge/bindings-contract.test.ts'],
  },
  tokens: {
    mutate: ['runtime/tokens.ts'],
    tests: ['test/host/tokens.test.ts', 'test/host/token-store.test.ts'],
  },
  'parser-bounds': {
    mutate: ['handlers/s3/requests.ts', 'handlers/s3/parse/ss.ts', 'handlers/traffic/parse/tc-units.ts'],
    tests: [
      'test/parsers/parser-bounds.test.ts',
      'test/parsers/s3/s3-parsers.test.ts',
      'test/parsers/traffic/parsers.test.ts',
    ],
  },
};
