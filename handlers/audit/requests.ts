import * as z from 'zod';
import { AUDIT_PAGE_MAX } from './contract';
import { areaName, tokenRef } from './names';

const isoTime = z.iso.datetime({ offset: true, error: 'must be an ISO date-time (2026-11-27T08:00:00Z)' });

export const auditListQuery = z.strictObject({
  /** requests at or after this time */
  since: isoTime.optional(),
  /** requests at or before this time */
  until: isoTime.optional(),
  /** requests to this area's routes */
  area: areaName.optional(),
  /** requests made with this token (id or name) */
  token: tokenRef.optional(),
  /** success: answered below 400; failure: 400 and above (refusals, errors) */
  outcome: z.enum(['success', 'failure']).optional(),
  /** the `next` of the previous page */
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, 'must be the `next` of a page')
    .transform(Number)
    .optional(),
  /** requests per page (default 50) */
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, `must be 1-${AUDIT_PAGE_MAX}`)
    .transform(Number)
    .pipe(z.number().max(AUDIT_PAGE_MAX, `must be 1-${AUDIT_PAGE_MAX}`))
    .optional(),
});
export type AuditListQuery = z.output<typeof auditListQuery>;
