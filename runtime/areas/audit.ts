import { AUDIT_QUERY_OP, auditQueryPayload, auditSettings } from '../../handlers/audit/contract';
import { payloadOf } from '../system/host-op';
import { auditTrail } from '../ops/audit-trail';
import { defineArea } from './types';

/** The audit trail over HTTP: the rows the host writes (runtime/ops/audit-trail.ts), read only. */
export default defineArea({
  name: 'audit',
  settings: auditSettings,
  setup: (host) => ({
    ops: {
      [AUDIT_QUERY_OP]: (p) => Promise.resolve(auditTrail(host.db, payloadOf(auditQueryPayload, AUDIT_QUERY_OP, p))),
    },
  }),
});
