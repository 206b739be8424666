/** The network area's host ops (runtime/areas/network.ts registers them): confirmed changes. */
import {
  CHANGE_CONFIRM_OP,
  CHANGE_DROP_OP,
  CHANGE_KEEP_OP,
  CHANGE_OPEN_OP,
  CHANGE_PENDING_OP,
  CHANGE_ROLLBACK_OP,
  changeConfirmPayload,
  changeDropPayload,
  changeKeepPayload,
  changeOpenPayload,
  changeRollbackPayload,
} from '../../../handlers/network/contract';
import { payloadOf } from '../../system/host-op';
import type { HostOp } from '../../system/service';
import type { ChangeManager } from './changes';

export function changeOps(m: ChangeManager): Record<string, HostOp> {
  return {
    [CHANGE_OPEN_OP]: (p, requestId) => m.open(payloadOf(changeOpenPayload, CHANGE_OPEN_OP, p), requestId),
    [CHANGE_KEEP_OP]: (p, requestId) => {
      const { id, ...from } = payloadOf(changeKeepPayload, CHANGE_KEEP_OP, p);
      return m.keep(id, from, requestId);
    },
    [CHANGE_DROP_OP]: async (p) => m.drop(payloadOf(changeDropPayload, CHANGE_DROP_OP, p).id),
    [CHANGE_PENDING_OP]: async () => m.pending(),
    [CHANGE_CONFIRM_OP]: async (p, requestId) =>
      m.confirm(payloadOf(changeConfirmPayload, CHANGE_CONFIRM_OP, p).id, requestId),
    [CHANGE_ROLLBACK_OP]: async (p, requestId) =>
      m.rollback(payloadOf(changeRollbackPayload, CHANGE_ROLLBACK_OP, p).id, requestId),
  };
}
