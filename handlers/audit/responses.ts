import * as z from 'zod';
import { auditCommand } from './contract';

/** One command (or file write, or host op) a request ran, in order. */
export const auditCommandAnswer = auditCommand.omit({ at: true }).extend({ at: z.string() });

/** One audited request: who, when, which route, the outcome, and what it ran. */
export const auditEntry = z.object({
  /** the audit row's id (pagination) */
  id: z.number().int(),
  at: z.string(),
  requestId: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  /** the route's pattern (`/api/v2/fs/mount`); null: no route has the path */
  route: z.string().nullable(),
  area: z.string().nullable(),
  /** the token that made it (never its secret); null: none or an invalid one */
  token: z.object({ id: z.string(), name: z.string() }).nullable(),
  remote: z.string().nullable(),
  outcome: z.enum(['success', 'failure']),
  status: z.number().int(),
  durationMs: z.number().nullable(),
  commands: z.array(auditCommandAnswer),
});

export const auditAnswer = z.object({
  items: z.array(auditEntry),
  /** pass as `cursor` for the next (older) page; null: this is the last */
  next: z.number().int().nullable(),
});
