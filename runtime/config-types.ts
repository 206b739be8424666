/**
 * The host configuration's shape, apart from its defaults and checks (config.ts): areas read it
 * without loading the config module, which loads every area (runtime/areas/index.ts).
 */
/**
 * Host configuration. Production reads /etc/ballast/config.yaml (see README); every field has a
 * default that is the real Debian location. Tests and the demo point every path into a private
 * state directory.
 */
export interface HostConfig {
  productName: string;
  hostId?: string;
  listen: { host: string; port: number };
  /** Where the API is served (default `/api/v2`; `/` serves it at the root). */
  basePath: string;
  /** HTTPS: the certificate, its key, and optionally the intermediate(s) sent after it. */
  tls?: { cert: string; key: string; chain?: string };
  stateDir: string;
  paths: Record<string, string>;
  /** Locations file operations may touch; defaults to the directories and files in `paths`. */
  fileRoots?: string[];
  system: {
    mode: 'live' | 'replay' | 'record';
    fixtures: string[];
    /** replay: placeholders in fixture argv and their values here, e.g. { $ROOT: /srv/demo/root } */
    fixtureAliases?: Record<string, string>;
    recordDir?: string;
    wrapper: string[];
    binaries: Record<string, string>;
    env: Record<string, string>;
    envAllow: string[];
  };
  limits: {
    bodyBytes: number;
    requestTimeoutMs: number;
    commandTimeoutMs: number;
    commandConcurrency: number;
    commandQueue: number;
    outputBytes: number;
    /** audit_log keeps rows at most this many days (pruned in the background). */
    auditMaxAgeDays: number;
    /** …and at most this many rows, the newest. */
    auditMaxRows: number;
    /** Finished jobs are kept at most this many days… */
    jobMaxAgeDays: number;
    /** …and at most this many, the newest (runtime/jobs/registry.ts). */
    jobMaxRows: number;
    /** How long a token row is reused without a query; a revocation still applies at once. 0: no cache. */
    tokenCacheMs: number;
  };
  settings: Record<string, unknown>;
  /**
   * Where the route bundles run: false in-process; 'workerd' or 'deno' in another process that
   * reaches SYSTEM/DB/EVENTS through the binding socket (stateDir/bindings.sock); true is the old
   * spelling of 'workerd'.
   */
  isolate: boolean | 'workerd' | 'deno';
  /** The host's log (runtime/ops/logger.ts): JSON lines or text for a terminal, and the lowest level written. */
  log: { format: 'json' | 'text'; level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent' };
  /**
   * Prometheus metrics: always at `<basePath>/metrics` with `metrics:read`; `listen`
   * (`127.0.0.1:9464`, `[::1]:9464`) also serves them there without a token (null: no listener).
   */
  metrics: { listen: string | null };
}
