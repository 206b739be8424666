import * as z from 'zod';
import { route } from '../../core/route';
import { CREATE_AGENT_1 } from '../examples';
import { agentIdParams } from '../requests';
import { getAgentRow } from '../store';

export default route({
  method: 'POST',
  path: '/notification/agent/:id/destroy',
  permission: 'notification:manage',
  examples: [
    {
      summary: 'destroy agent 1',
      params: { id: '1' },
      before: [CREATE_AGENT_1],
      then: [
        {
          method: 'GET',
          path: '/notification/agent/1/details',
          status: 404,
          shows: { error: { code: 'not_found' } },
        },
      ],
    },
    { summary: 'no agent 999 on a fresh demo', params: { id: '999' }, status: 404 },
  ],
  summary: 'Remove a notification agent; its undelivered notifications are cancelled',
  params: agentIdParams,
  response: z.array(z.number().int()).length(1),
  async handler({ db, params, events }) {
    const row = await getAgentRow(db, params.id);
    await db.batch([
      db.prepare('DELETE FROM notification_agents WHERE id = ?').bind(params.id),
      db
        .prepare(
          "UPDATE deliveries SET state = 'cancelled', last_error = 'agent removed' WHERE agent_id = ? AND state = 'pending'",
        )
        .bind(params.id),
    ]);
    await events.send({ kind: 'notification.agent.destroyed', data: { id: row.id, type: row.type } });
    return [row.id];
  },
});
