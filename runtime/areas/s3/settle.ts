/**
 * Settling unfinished S3 share changes (handlers/s3/journal.ts) in the host process, from two
 * callers: the start-up task (rows an earlier host process left) and the op `s3/settle` (a route
 * about to change a share whose earlier change did not finish). One lock serialises them, so a
 * rollback never runs twice at once, and the start-up task settles only the rows it saw before
 * the server listened: a row a route of this process wrote is that route's, in flight or left
 * for the next change of its share, never rolled back under it.
 */
import { database } from '../../../handlers/core/bindings';
import { withLock } from '../../../handlers/core/lock';
import { SystemClient } from '../../../handlers/core/system';
import {
  pendingIntent,
  settleIntent,
  settlePayload,
  SETTLE_OP,
  type Intent,
  type S3Settings,
  type SettleResult,
} from '../../../handlers/s3/contract';
import { payloadOf } from '../../system/host-op';
import type { HostOp } from '../../system/service';
import type { AreaHost } from '../types';

export const STARTUP_REQUEST_ID = 'startup-s3';
const LOCK = 's3-settle';

type SettleHost = Pick<AreaHost<S3Settings>, 'env' | 'vars' | 'events' | 'db' | 'log'>;

/** The rows present now (read synchronously, so before any route of this process can add one). */
export function intentsNow(host: Pick<AreaHost<S3Settings>, 'db' | 'log'>): Intent[] {
  try {
    const rows = host.db
      .prepare('SELECT share_name, op, request_id, started_at FROM s3_intents ORDER BY started_at')
      .all() as { share_name: string; op: Intent['op']; request_id: string | null; started_at: number }[];
    return rows.map((x) => ({ shareName: x.share_name, op: x.op, requestId: x.request_id, startedAt: x.started_at }));
  } catch (e) {
    host.log(`s3: cannot read the intent journal: ${String(e)}`);
    return [];
  }
}

const same = (a: Intent, b: Intent) => a.op === b.op && a.requestId === b.requestId && a.startedAt === b.startedAt;

/**
 * Settles the share's unfinished change (only `expected`, when given and still there); logs it and
 * emits `s3.share.recovered`. A row whose needed steps failed stays.
 */
export async function settleShare(
  host: SettleHost,
  shareName: string,
  requestId: string,
  expected?: Intent,
): Promise<SettleResult> {
  return withLock(LOCK, async () => {
    const db = database(host.env);
    const intent = await pendingIntent(db, shareName);
    if (!intent || (expected && !same(intent, expected))) return { pending: false };
    const sys = new SystemClient(host.env.SYSTEM, requestId);
    const r = await settleIntent(sys, host.vars, db, intent);
    // recorded before the log line, so a line seen means the event is stored too
    await host.events.send({
      kind: 's3.share.recovered',
      data: { shareName, op: intent.op, outcome: r.outcome, complete: r.complete },
    });
    const failed = r.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.error ?? 'failed'}`);
    const by = requestId === STARTUP_REQUEST_ID ? '' : ` before request ${requestId}`;
    host.log(
      `s3: unfinished ${intent.op} of share ${shareName} (request ${intent.requestId ?? '-'}) ${r.complete ? r.outcome : `not fully ${r.outcome}; retried by the next change of the share or the next start`}${by}` +
        `: ${r.steps.map((s) => s.step).join('; ')}${failed.length ? ` — failed: ${failed.join('; ')}` : ''}`,
    );
    return { pending: true, op: intent.op, outcome: r.outcome, complete: r.complete, steps: r.steps };
  });
}

/** Start-up task: the rows seen before the server listened (`seen`). Never throws. */
export async function settleAtStart(host: SettleHost, seen: Intent[]): Promise<number> {
  for (const intent of seen) {
    try {
      await settleShare(host, intent.shareName, STARTUP_REQUEST_ID, intent);
    } catch (e) {
      host.log(`s3: settling the unfinished ${intent.op} of share ${intent.shareName} failed: ${String(e)}`);
    }
  }
  return seen.length;
}

/** The op `s3/settle` {shareName}: a route settles its share's unfinished change before changing it. */
export function settleOp(host: SettleHost): Record<string, HostOp> {
  return {
    [SETTLE_OP]: async (payload, requestId) => {
      const { shareName } = payloadOf(settlePayload, SETTLE_OP, payload);
      return settleShare(host, shareName, requestId ?? 's3-settle');
    },
  };
}
