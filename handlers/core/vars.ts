/**
 * VARS: plain configuration the host hands every route. Paths are absolute; the host points them
 * at the real Debian locations in production and into a private state directory for tests and
 * the demo, so routes never hard-code /etc.
 */
export interface Vars {
  productName: string;
  hostId: string;
  /** Named absolute paths (krb5Conf, krb5ConfD, keytab, networkInterfaces, ...). */
  paths: Record<string, string>;
  /** Absolute paths of the binaries routes may run, keyed by tool name. */
  bin: Record<string, string>;
  /** Area-specific plain settings (e.g. network.listKinds). */
  settings: Record<string, unknown>;
  /** Where the API is mounted (default `/api/v2`; `''` or `/` when an embedder strips its prefix). */
  basePath?: string;
}

/** The configured absolute binary of a tool; the areas declare theirs (runtime/areas/<area>.ts `binaries`). */
export function bin(vars: Vars, tool: string): string {
  const p = vars.bin[tool];
  if (!p) throw new Error(`no binary configured for ${tool}`);
  return p;
}

export function path(vars: Vars, name: string): string {
  const p = vars.paths[name];
  if (!p) throw new Error(`no path configured for ${name}`);
  return p;
}
