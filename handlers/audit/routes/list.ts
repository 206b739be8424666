import type * as z from 'zod';
import { route } from '../../core/route';
import { AUDIT_QUERY_OP, type AuditQueryResult } from '../contract';
import { auditListQuery } from '../requests';
import { auditAnswer } from '../responses';

const iso = (ms: number) => new Date(ms).toISOString();

export default route({
  method: 'GET',
  path: '/audit',
  permission: 'audit:read',
  summary: 'The audit trail: each change or refused request, who made it, its outcome and the commands it ran',
  query: auditListQuery,
  examples: [
    { summary: 'the newest audited requests' },
    { summary: 'failed requests of one token', query: { outcome: 'failure', token: 'admin', limit: '20' } },
  ],
  response: auditAnswer,
  async handler({ query, system }): Promise<z.input<typeof auditAnswer>> {
    const r = await system.op<AuditQueryResult>(AUDIT_QUERY_OP, {
      since: query.since === undefined ? undefined : Date.parse(query.since),
      until: query.until === undefined ? undefined : Date.parse(query.until),
      area: query.area,
      token: query.token,
      outcome: query.outcome,
      before: query.cursor,
      limit: query.limit ?? 50,
    });
    return {
      items: r.items.map((i) => ({
        ...i,
        at: iso(i.at),
        outcome: i.status < 400 ? ('success' as const) : ('failure' as const),
        commands: i.commands.map((c) => ({ ...c, at: iso(c.at) })),
      })),
      next: r.next,
    };
  },
});
