/**
 * `import()` of a route bundle, through the launcher's own `import()` when there is one.
 *
 * Why: the CLI runs from V8's code cache (runtime/launch.ts), and on Node 20 code that comes
 * from a cache loses its `import()` (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING: the callback is
 * tied to the script's host options, which the cache does not carry). The launcher leaves a
 * working one under this key; anywhere else (vitest, the ESM host bundle) `import()` is used.
 * Bare package names resolve from the launcher's directory, as they would from the bundle's.
 */
export const IMPORTER = Symbol.for('ballast.import');

type Importer = (url: string) => Promise<unknown>;

/** A module by URL or package name (the packages loaded on first use: nodemailer, ajv, node-pty). */
export function importModule<T = unknown>(url: string): Promise<T> {
  const outer = (globalThis as { [IMPORTER]?: Importer })[IMPORTER];
  // build.mjs accepts this one import() in the cached bundle: the launcher always sets outer there
  return (outer ? outer(url) : import(url)) as Promise<T>;
}
