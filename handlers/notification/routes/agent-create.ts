import * as z from 'zod';
import { route } from '../../core/route';
import { agentCreateBody } from '../requests';
import { agent } from '../responses';
import { checkWebhookTarget, getAgentRow, sealSecrets, toAgent } from '../store';

export default route({
  method: 'POST',
  path: '/notification/agent/create',
  permission: 'notification:manage',
  examples: [
    {
      summary: 'a webhook agent',
      body: { type: 'webhook', enabled: true, json: { url: 'https://hooks.example.com/ballast' } },
      then: [
        {
          method: 'GET',
          path: '/notification/agent',
          shows: [{ type: 'webhook', enabled: true, json: { url: 'https://hooks.example.com/ballast' } }],
        },
      ],
    },
  ],
  summary: 'Create a notification agent (sms, smtp or webhook); answers an array with it',
  body: agentCreateBody,
  response: z.array(agent).length(1),
  async handler({ db, body, events, vars, system }) {
    checkWebhookTarget(body.type, body.json as Record<string, unknown>, vars);
    const now = Date.now();
    const iso = new Date(now).toISOString();
    const r = await db
      .prepare(
        'INSERT INTO notification_agents (type, enabled, json, unix_time, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .bind(
        body.type,
        body.enabled ? 1 : 0,
        JSON.stringify(await sealSecrets(system, body.type, body.json as Record<string, unknown>)),
        now,
        iso,
        iso,
      )
      .run();
    const row = await getAgentRow(db, r.meta.last_row_id);
    await events.send({
      kind: 'notification.agent.created',
      data: { id: row.id, type: row.type, enabled: body.enabled },
    });
    return [toAgent(row, vars.hostId)];
  },
});
