/**
 * The bindings an `env` must hold before any request is served: an embedder who forgets one
 * learns it at start, by name, instead of from a 500 on the first request that needs it. Platform
 * neutral (no node: imports): dist/app.mjs's `bind(env)` runs it too.
 */
import type { Env } from '../handlers/core/bindings';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
const hasMethods = (v: unknown, ...names: string[]) => isObject(v) && names.every((n) => typeof v[n] === 'function');

/** What is missing or malformed in `env`, one line per binding (empty: it is complete). */
export function missingBindings(env: unknown): string[] {
  if (!isObject(env)) return ['env: not an object'];
  const out: string[] = [];
  if (!hasMethods(env.SYSTEM, 'fetch'))
    out.push('SYSTEM: a Fetcher answering POST /system/<op> (docs/bindings-protocol.md)');
  if (!hasMethods(env.DB, 'prepare', 'batch') && !hasMethods(env.DB_FETCH, 'fetch'))
    out.push('DB (a D1 database made from dist/migrations/) or DB_FETCH (a Fetcher)');
  if (!hasMethods(env.EVENTS, 'send') && !hasMethods(env.EVENTS_FETCH, 'fetch'))
    out.push('EVENTS ({ send(event) }) or EVENTS_FETCH (a Fetcher)');
  const vars = env.VARS;
  if (!isObject(vars)) out.push('VARS: { productName, hostId, paths, bin, settings }');
  else
    for (const [k, kind] of [
      ['productName', 'string'],
      ['hostId', 'string'],
      ['paths', 'object'],
      ['bin', 'object'],
      ['settings', 'object'],
    ] as const)
      if (kind === 'string' ? typeof vars[k] !== 'string' || vars[k] === '' : !isObject(vars[k]))
        out.push(`VARS.${k}: ${kind === 'string' ? 'a non-empty string' : 'an object'}`);
  return out;
}

/** Throws, naming every missing binding, unless `env` is complete. */
export function assertBindings(env: unknown): asserts env is Env {
  const missing = missingBindings(env);
  if (missing.length) throw new TypeError(`ballast: env lacks ${missing.join('; ')}`);
}
