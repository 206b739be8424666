import * as z from 'zod';
import { bin, path, type Vars } from '../core/vars';

/**
 * What the certificate routes and the host's certificate area (runtime/areas/certificate.ts)
 * share: the pieces and where they live, the op names and their payloads and results, and
 * `settings.certificate`.
 */

/** The appliance's own TLS pieces, in chain order from the leaf's key to the root. */
export const PIECES = ['root', 'intermediate', 'server', 'private_key'] as const;
export type Piece = (typeof PIECES)[number];

/** `paths.<key>` of each piece (the same files the host's `tls:` section serves HTTPS with). */
export const PIECE_PATH_KEY: Record<Piece, string> = {
  root: 'tlsRoot',
  intermediate: 'tlsIntermediate',
  server: 'tlsServer',
  private_key: 'tlsPrivateKey',
};

/** Debian defaults of the piece files. */
export const PIECE_DEFAULT_PATH: Record<Piece, string> = {
  root: '/etc/ballast/tls/root.crt',
  intermediate: '/etc/ballast/tls/intermediate.crt',
  server: '/etc/ballast/tls/server.crt',
  private_key: '/etc/ballast/tls/server.key',
};

/** The trust store and the directories update-ca-certificates works on (its options). */
export const TRUST_PATHS = {
  /** `--localcertsdir`: the `.crt` files this area lists, adds and removes. */
  caCertificates: '/usr/local/share/ca-certificates',
  /** `--certsconf` */
  caCertificatesConf: '/etc/ca-certificates.conf',
  /** `--certsdir`: the distribution's CA certificates (read only) */
  caCertificatesShare: '/usr/share/ca-certificates',
  /** `--etccertsdir`: symlinks and the bundle the tool writes */
  sslCerts: '/etc/ssl/certs',
  /** `--hooksdir` */
  caCertificatesHooks: '/etc/ca-certificates/update.d',
} as const;

export const KEY_TYPES = ['ecdsa-p256', 'ecdsa-p384', 'rsa-2048', 'rsa-3072', 'rsa-4096'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

const hostName = z
  .string()
  .regex(
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
    'must be a DNS host name',
  );
const ipAddress = z.union([z.ipv4(), z.ipv6()]);
const unitName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9:_.@-]{0,250}\.(service|socket|target|path|timer)$/,
    'must be a systemd unit name (e.g. nginx.service)',
  );

/**
 * The three application modules that serve with the appliance's key, restarted after regenerate by
 * default: the web UI, the HTTPS front end and the S3 gateway (the API itself reloads its TLS in process).
 */
export const DEFAULT_RESTART_UNITS = [
  'ballast-ui.service',
  'ballast-proxy.service',
  'ballast-s3-gateway.service',
] as const;

/** `settings.certificate` (checked by the host at start; routes read it with areaSettings). */
export const certificateSettings = z.strictObject({
  /** Seconds between an ingest and the automatic rollback when no commit came (the spec's 60). */
  commitWindowSeconds: z.number().positive().max(3600).default(60),
  /** regenerate: the new leaf's key type. */
  keyType: z.enum(KEY_TYPES).default('ecdsa-p256'),
  /** regenerate: validity of the new self-signed certificate. */
  validityDays: z.number().int().min(1).max(3650).default(825),
  /** regenerate: the certificate's CN and first DNS name; default: the machine's host name. */
  hostName: hostName.optional(),
  /**
   * regenerate: IP SANs; default: the addresses of the appliance's own interfaces (NICs and what is
   * built on them: bonds, VLANs, bridges with such a port), not loopback, link-local or container plumbing.
   */
  addresses: z.array(ipAddress).max(64).optional(),
  /**
   * The spec's "three application modules must be restarted" after regenerate: `systemctl
   * try-restart` of those that are installed and running (README "Regenerate restarts").
   */
  restartUnits: z
    .array(unitName)
    .max(16)
    .default([...DEFAULT_RESTART_UNITS]),
  /**
   * Time limit of one update-ca-certificates run (add, remove and their repair run): it rebuilds
   * every hash link and the bundle, 4-30 s on a real store; the host caps it at 10 x
   * `limits.commandTimeoutMs`.
   */
  trustTimeoutMs: z.number().int().min(1000).max(600_000).default(60_000),
});
export type CertificateSettings = z.output<typeof certificateSettings>;

// ---- host ops -------------------------------------------------------------------------------

/** Parse PEM text with node:crypto; never returns key material. */
export const INSPECT_OP = 'certificate/inspect';
export const inspectPayload = z.strictObject({ pem: z.string().max(1024 * 1024) });

export const certInfo = z.object({
  subject: z.string(),
  issuer: z.string(),
  serialNumber: z.string(),
  notBefore: z.string().describe('ISO 8601'),
  notAfter: z.string().describe('ISO 8601'),
  ca: z.boolean(),
  selfSigned: z.boolean(),
  keyType: z.string(),
  keyBits: z.number().optional(),
  curve: z.string().optional(),
  fingerprint256: z.string(),
  /** why the appliance does not accept this key (the one rule of ingest and trust store add) */
  keyProblem: z.string().optional(),
});
export type CertInfo = z.output<typeof certInfo>;

export const inspectResult = z.object({
  certificates: z.array(certInfo),
  /** The certificates re-encoded by node:crypto (no text around them). */
  normalized: z.string(),
  /** Labels of blocks that are not certificates (`PRIVATE KEY`, ...). */
  otherBlocks: z.array(z.string()),
  /** Why a block did not parse, when one did not. */
  error: z.string().optional(),
  /** Why the text is not exactly one PEM block (whitespace around it only, base64 inside). */
  layout: z.string().optional(),
});
export type InspectResult = z.output<typeof inspectResult>;

/**
 * Read a trusted certificate or a TLS piece: the host names the file itself (from the configured
 * paths), opens it without following symlinks and refuses anything but a regular file (409).
 */
/** A trust store name as the host takes it (the routes' `trustName` already dropped `.crt`). */
const trustedName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)
  .refine((s) => !s.includes('..'));

export const READ_OP = 'certificate/read';
export const readPayload = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('trusted'), name: trustedName }),
  z.strictObject({ kind: z.literal('piece'), piece: z.enum(PIECES) }),
]);
export type ReadPayload = z.input<typeof readPayload>;
export const readResult = z.object({
  path: z.string(),
  content: z.string().nullable().describe('null: the file does not exist'),
});
export type ReadResult = z.output<typeof readResult>;

/** Validate and swap in new TLS pieces, start the commit window. */
export const INGEST_OP = 'certificate/ingest';
export const ingestPayload = z.strictObject({
  pieces: z.strictObject({
    root: z.string().optional(),
    intermediate: z.string().optional(),
    server: z.string().optional(),
    private_key: z.string().optional(),
  }),
});
export const pieceProblem = z.object({ piece: z.enum(PIECES), message: z.string() });
export type PieceProblem = z.output<typeof pieceProblem>;
export const ingestResult = z.union([
  z.object({
    ok: z.literal(true),
    confirmationTimeout: z.number(),
    resolutions: z.array(z.object({ piece: z.enum(PIECES), output: z.string() })),
  }),
  z.object({ ok: z.literal(false), problems: z.array(pieceProblem) }),
]);
export type IngestResult = z.output<typeof ingestResult>;

/** Keep what ingest swapped in (409 `conflict` when nothing is pending). */
export const COMMIT_OP = 'certificate/commit';
export const commitResult = z.object({ pieces: z.array(z.enum(PIECES)) });

/** New self-signed leaf and key, root and intermediate removed, TLS reloaded. */
export const REGENERATE_OP = 'certificate/regenerate';
export const regenerateResult = z.union([
  z.object({
    ok: z.literal(true),
    subject: z.string(),
    notAfter: z.string(),
    keyType: z.enum(KEY_TYPES),
    sans: z.array(z.string()),
    /** an ingest was waiting for a commit: the regenerated pieces replace it and end its window */
    endedWindow: z.boolean(),
  }),
  /** openssl failed: the route answers 502 command_failed with these details (nothing changed) */
  z.object({
    ok: z.literal(false),
    failure: z.object({ command: z.array(z.string()), exitCode: z.number(), stderr: z.string(), message: z.string() }),
  }),
]);
export type RegenerateResult = z.output<typeof regenerateResult>;

/** The bundle update-ca-certificates writes in `sslCerts` (it builds it as `<bundle>.new` first). */
export const TRUST_BUNDLE = 'ca-certificates.crt';

/** update-ca-certificates with every location it uses given explicitly (the configured paths). */
export function updateArgv(vars: Vars, fresh: boolean): string[] {
  return [
    bin(vars, 'updateCaCertificates'),
    ...(fresh ? ['--fresh'] : []),
    '--certsconf',
    path(vars, 'caCertificatesConf'),
    '--certsdir',
    path(vars, 'caCertificatesShare'),
    '--localcertsdir',
    path(vars, 'caCertificates'),
    '--etccertsdir',
    path(vars, 'sslCerts'),
    '--hooksdir',
    path(vars, 'caCertificatesHooks'),
  ];
}

/** The host judges a run of the tool as the routes read its output (a summary line, or it did not update). */
export { parseUpdateCaCertificates } from './parse/update-ca-certificates';

/**
 * Add `<name>.crt` to the trust store or remove it, and run update-ca-certificates. The host
 * journals the change (`<stateDir>/certificate/trust-intent.json`) before touching anything; when
 * the tool fails or times out it puts the file back, drops the tool's partial bundle and runs it
 * again with `--fresh` (links and bundle rebuilt), and the next start settles a change a killed
 * host left. Answers the tool's run; the route maps a failed one to its error.
 */
export const TRUST_OP = 'certificate/trust';
export const trustPayload = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('add'), name: trustedName, pem: z.string().max(1024 * 1024) }),
  z.strictObject({ action: z.literal('remove'), name: trustedName }),
]);
export type TrustPayload = z.input<typeof trustPayload>;
export const trustRun = z.object({
  command: z.array(z.string()),
  code: z.number(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  durationMs: z.number(),
});
export type TrustRun = z.output<typeof trustRun>;
export const trustResult = z.union([
  z.object({
    ok: z.literal(true),
    output: z.string(),
    /** the file added or removed and the certificate(s) it held */
    file: z.string(),
    certificates: z.array(z.object({ subject: z.string(), fingerprint256: z.string() })),
  }),
  z.object({
    ok: z.literal(false),
    /** the run that failed: the change's own, or the repair of an earlier one */
    failure: trustRun,
    /** false: the store could not be put back yet (the repair is retried before the next change and at start) */
    restored: z.boolean(),
    message: z.string().optional(),
  }),
]);
export type TrustResult = z.output<typeof trustResult>;
