/**
 * What the audit route and the host's audit area (runtime/areas/audit.ts) share: the query op,
 * its payload (the filters, times as epoch ms) and its result (runtime/ops/audit-trail.ts).
 */
import * as z from 'zod';

export const AUDIT_QUERY_OP = 'audit/query';

/** The most requests one page holds. */
export const AUDIT_PAGE_MAX = 200;

export const auditQueryPayload = z.strictObject({
  since: z.number().int().optional(),
  until: z.number().int().optional(),
  area: z.string().optional(),
  token: z.string().optional(),
  outcome: z.enum(['success', 'failure']).optional(),
  before: z.number().int().positive().optional(),
  limit: z.number().int().min(1).max(AUDIT_PAGE_MAX),
});
export type AuditQueryPayload = z.output<typeof auditQueryPayload>;

export const auditCommand = z.object({
  at: z.number(),
  /** exec, pty, file/write, file/restore, file/remove, or an area's op (`certificate/…`) */
  kind: z.string(),
  /** the command's argv, or the op's targets (paths, names); never stdin, a pty answer or a secret */
  argv: z.array(z.unknown()),
  exitCode: z.number().int().nullable(),
  durationMs: z.number().nullable(),
  note: z.string().nullable(),
});

export const auditRequest = z.object({
  id: z.number().int(),
  at: z.number(),
  requestId: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  route: z.string().nullable(),
  area: z.string().nullable(),
  token: z.object({ id: z.string(), name: z.string() }).nullable(),
  remote: z.string().nullable(),
  status: z.number().int(),
  durationMs: z.number().nullable(),
  commands: z.array(auditCommand),
});

export const auditQueryResult = z.object({ items: z.array(auditRequest), next: z.number().int().nullable() });
export type AuditQueryResult = z.output<typeof auditQueryResult>;

/** `settings.audit`: none yet (the config file may give `{}`). */
export const auditSettings = z.strictObject({});
