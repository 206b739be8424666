import type { SqliteDb } from '../../db/database';
import type { HostOp } from '../../system/service';
import { payloadOf } from '../../system/host-op';
import { SystemRefusal } from '../../system/types';
import {
  TEST_OP,
  testOpPayload,
  type NotificationSettings,
  type TestOpResult,
} from '../../../handlers/notification/contract';
import { testNotification } from './payload';
import { deliveryAgent, sendThrough } from './send';
import { SendError } from './send-error';
import { trustedCas } from './trust';
import { opAudit } from '../../db/audit';

export interface NotificationOpsOptions {
  db: SqliteDb;
  settings: NotificationSettings;
  hostId: string;
  productName: string;
  caDir?: string;
  /** Opens the agents' sealed secrets (runtime/system/secret-box.ts). */
  openSecret?: (sealed: string) => string;
}

/**
 * The host side of GET /notification/agent/{id}/test: send one test message through the agent
 * now, outside the outbox (nothing is retried or recorded as an event). The audit log gets the
 * agent, its type and the outcome, never its configuration.
 */
export function notificationOps(o: NotificationOpsOptions): Record<string, HostOp> {
  const select = o.db.prepare('SELECT type, json FROM notification_agents WHERE id = ?');
  const audit = opAudit(o.db);
  return {
    [TEST_OP]: async (payload, requestId): Promise<TestOpResult> => {
      const { id } = payloadOf(testOpPayload, TEST_OP, payload);
      const row = select.get(id) as { type: string; json: string } | undefined;
      if (!row) throw new SystemRefusal('not_found', `no notification agent with id ${id}`);
      const started = Date.now();
      let result: TestOpResult;
      try {
        const agent = deliveryAgent(id, row.type, row.json, o.openSecret);
        await sendThrough(agent, testNotification(id, o.hostId, o.productName), {
          settings: o.settings,
          productName: o.productName,
          ca: trustedCas(o.caDir),
        });
        result = { sent: true };
      } catch (e) {
        // Anything else is a bug: the SYSTEM service logs it and the route answers 500.
        if (!(e instanceof SendError)) throw e;
        result = { sent: false, error: e.message };
      }
      audit({
        kind: 'notification/test',
        requestId,
        argv: [`agent:${id}`, row.type],
        exitCode: result.sent ? 0 : 1,
        durationMs: Date.now() - started,
        note: result.sent ? null : result.error,
      });
      return result;
    },
  };
}
