/**
 * The FLR synchronisation configuration: a JSON file `{max_history_size, run_interval,
 * directories}` at `paths.dfsFlrConfig` (no public format exists for it; JSON keeps the spec's
 * names). The directories are only written for the service (never opened by this host), so they
 * are checked as text: absolute, no `..`, normalised.
 */
import { issuesOf, issuesText } from '../core/errors';
import { ParseError } from '../core/parse-error';
import { flrConfig } from './responses';
import type * as z from 'zod';

export type FlrConfig = z.output<typeof flrConfig>;

export function parseFlrConfig(text: string): FlrConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ParseError('flr config', 'not JSON');
  }
  const r = flrConfig.strict().safeParse(doc);
  if (!r.success) throw new ParseError('flr config', issuesText(issuesOf('', r.error)));
  return r.data;
}

export function renderFlrConfig(c: FlrConfig): string {
  return `${JSON.stringify({ max_history_size: c.max_history_size, run_interval: c.run_interval, directories: c.directories }, null, 2)}\n`;
}

/** `/a/b/` → `/a/b`; `//a///b` → `/a/b`. */
export const normaliseDir = (p: string) => `/${p.split('/').filter(Boolean).join('/')}`;
