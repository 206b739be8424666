import * as z from 'zod';
import { route } from '../../core/route';
import { CREATE_AGENT_1 } from '../examples';
import { ApiError } from '../../core/errors';
import { agentIdParams } from '../requests';
import { getAgentRow } from '../store';
import { TEST_OP, type TestOpPayload, type TestOpResult } from '../contract';

export default route({
  method: 'GET',
  path: '/notification/agent/:id/test',
  // manage, not read: it makes the appliance send a message to an outside destination.
  permission: 'notification:manage',
  examples: [
    {
      // the demo delivers into var/demo/notifications.jsonl (settings.notification.sinkFile)
      summary: 'agent 1 (after a create): the test message goes out; the demo appends it to its notification sink',
      params: { id: '1' },
      before: [CREATE_AGENT_1],
    },
    { summary: 'no agent 999 on a fresh demo', params: { id: '999' }, status: 404 },
  ],
  summary: 'Send one test message through the agent now (enabled or not); answers [{id}]',
  sideEffects: true,
  params: agentIdParams,
  response: z.array(z.object({ id: z.number().int() })).length(1),
  async handler({ db, params, system }) {
    const row = await getAgentRow(db, params.id);
    // Sending needs sockets (SMTP, HTTP): the host does it, through a SYSTEM op.
    const r = await system.op<TestOpResult>(TEST_OP, { id: row.id } satisfies TestOpPayload);
    if (!r.sent) {
      throw new ApiError('bad_gateway', `the ${row.type} agent ${row.id} could not send the test message: ${r.error}`, {
        details: { agentId: row.id, type: row.type, reason: r.error },
      });
    }
    return [{ id: row.id }];
  },
});
