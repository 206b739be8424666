/**
 * Settling a share's unfinished change before a new one (host op `s3/settle`, contract.ts, run by
 * runtime/areas/s3/settle.ts). The host runs it, not the route, so the route's retry and the
 * host's start-up settling never run the same rollback at once (one lock in the host process).
 */
import { conflict } from '../core/errors';
import type { SystemClient } from '../core/system';
import { SETTLE_OP, type SettleResult } from './contract';
import { RETRIED_BY, unfinishedText } from './journal';

/**
 * Every change of a share starts here, before it reads the share: an earlier change of it that
 * did not finish is settled first (a failed update rolled back, …), so the new change plans from
 * what is really there. Still unsettled: 409 saying what is left, and nothing else runs.
 */
export async function settleFirst(system: SystemClient, shareName: string): Promise<void> {
  const r = await system.op<SettleResult>(SETTLE_OP, { shareName });
  if (!r.pending || r.complete) return;
  const what = r.outcome === 'completed' ? 'completing it' : 'rolling it back';
  const state =
    r.outcome === 'completed'
      ? 'the share is partly deleted'
      : r.op === 'create'
        ? 'the share is partly created'
        : 'the share is NOT rolled back fully';
  throw conflict(
    `an earlier ${r.op} of S3 share ${shareName} did not finish and ${what} failed again: ${state}: ${unfinishedText(r.steps)}; no other change of this share is made until that is done (${RETRIED_BY})`,
    {
      shareName,
      pending: { op: r.op, outcome: r.outcome, complete: false, steps: r.steps },
      ...(r.outcome === 'rolled back' ? { rolledBack: false } : {}),
    },
  );
}
