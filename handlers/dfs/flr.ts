/**
 * The FLR synchronisation configuration: a JSON file `{max_history_size, run_interval,
 * directories}` at `paths.dfsFlrConfig` (no public format exists for it; JSON keeps the spec's
 * names). The directories are only written for the service (never opened by this host), so they
 * are checked as text: absolute, no `..`, normalised.
 */
import type * as z from 'zod';
import { parseJsonOutput } from '../tools/json-output';
import { flrConfig } from './responses';

export type FlrConfig = z.output<typeof flrConfig>;

/** The file as JSON; not JSON, or a key missing/unknown, is a ParseError (502) naming the key. */
export const parseFlrConfig = (text: string): FlrConfig => parseJsonOutput('flr config', text, flrConfig.strict());

export function renderFlrConfig(c: FlrConfig): string {
  return `${JSON.stringify({ max_history_size: c.max_history_size, run_interval: c.run_interval, directories: c.directories }, null, 2)}\n`;
}

/** `/a/b/` → `/a/b`; `//a///b` → `/a/b`. */
export const normaliseDir = (p: string) => `/${p.split('/').filter(Boolean).join('/')}`;
