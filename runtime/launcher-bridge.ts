/**
 * What the CLI and its launcher (runtime/launch.ts, dist/host/cli.mjs) tell each other, through
 * two global keys; without the launcher (vitest, the ESM host bundle) both fall back to nothing
 * special.
 *
 * `import()`: the CLI runs from V8's code cache, and on Node 20 code that comes from a cache
 * loses its `import()` (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING: the callback is tied to the
 * script's host options, which the cache does not carry). The launcher leaves a working one;
 * bare package names resolve from the launcher's directory, as they would from the bundle's.
 *
 * Start-up done: `serve` says when it listens, and a launcher without a usable cache writes one
 * then, holding what start-up compiled.
 */
export const IMPORTER = Symbol.for('ballast.import');
export const STARTED = Symbol.for('ballast.started');

export type Bridge = { [IMPORTER]?: (url: string) => Promise<unknown>; [STARTED]?: () => void };

/** A module by URL or package name (the packages loaded on first use: nodemailer, ajv, node-pty). */
export function importModule<T = unknown>(url: string): Promise<T> {
  const outer = (globalThis as Bridge)[IMPORTER];
  // build.mjs accepts this one import() in the cached bundle: the launcher always sets outer there
  return (outer ? outer(url) : import(url)) as Promise<T>;
}

/** `serve` listens: whatever start-up compiles has been compiled. */
export function startupDone(): void {
  (globalThis as Bridge)[STARTED]?.();
}
