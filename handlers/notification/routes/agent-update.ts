import * as z from 'zod';
import { route } from '../../core/route';
import { CREATE_AGENT_1 } from '../examples';
import { ApiError } from '../../core/errors';
import { agentIdParams, agentUpdateBody } from '../requests';
import { agent } from '../responses';
import { checkWebhookTarget, getAgentRow, resolveUpdatedConfig, sameConfig, sealSecrets, toAgent } from '../store';

export default route({
  method: 'POST',
  path: '/notification/agent/:id/update',
  permission: 'notification:manage',
  examples: [
    {
      summary: 'point agent 1 at another URL',
      params: { id: '1' },
      body: { json: { url: 'https://hooks.example.com/ballast-v2' } },
      before: [CREATE_AGENT_1],
      then: [
        {
          method: 'GET',
          path: '/notification/agent/1/details',
          shows: [{ id: 1, json: { url: 'https://hooks.example.com/ballast-v2' } }],
        },
      ],
    },
    { summary: 'no agent 999 on a fresh demo', params: { id: '999' }, body: { enabled: false }, status: 404 },
  ],
  summary:
    'Change the type, enabled flag and/or configuration of an agent (every field optional; a partial json is merged when the type is unchanged); omitted secrets are kept',
  params: agentIdParams,
  body: agentUpdateBody,
  response: z.array(agent).length(1),
  async handler({ db, params, body, events, vars, system }) {
    if (body.id !== undefined && body.id !== params.id) {
      throw new ApiError('validation_failed', `invalid body: body.id: must equal the id in the URL (${params.id})`, {
        issues: [{ path: 'body.id', message: `must equal the id in the URL (${params.id})` }],
      });
    }
    const before = await getAgentRow(db, params.id);
    const storedJson: Record<string, unknown> = JSON.parse(before.json);
    const type = body.type ?? before.type;
    let json: Record<string, unknown>;
    if (body.json !== undefined) {
      // same type: a partial json is merged into the stored one (a key given replaces that key)
      const incoming = type === before.type ? { ...storedJson, ...body.json } : body.json;
      json = resolveUpdatedConfig(type, incoming, { type: before.type, json: storedJson });
    } else if (type !== before.type) {
      throw new ApiError('validation_failed', 'invalid body: body.json: required when type changes', {
        issues: [{ path: 'body.json', message: 'required when type changes' }],
      });
    } else json = resolveUpdatedConfig(type, storedJson, { type: before.type, json: storedJson });
    if (body.json !== undefined) checkWebhookTarget(type, json, vars);
    const enabled = body.enabled ?? before.enabled === 1;

    const changed: string[] = [];
    if (type !== before.type) changed.push('type');
    if (enabled !== (before.enabled === 1)) changed.push('enabled');
    if (!sameConfig(json, storedJson)) changed.push('json');

    // nothing to change ({} or the same values): 200 with the agent as it is, no write, no event
    if (changed.length === 0) return [toAgent(before, vars.hostId)];

    const now = new Date().toISOString();
    const stored = await sealSecrets(system, type, json);
    const statements = [
      db
        .prepare('UPDATE notification_agents SET type = ?, enabled = ?, json = ?, updated_at = ? WHERE id = ?')
        .bind(type, enabled ? 1 : 0, JSON.stringify(stored), now, params.id),
    ];
    // A disabled agent receives nothing more, including retries of events it was due earlier.
    if (!enabled) {
      statements.push(
        db
          .prepare(
            "UPDATE deliveries SET state = 'cancelled', last_error = 'agent disabled' WHERE agent_id = ? AND state = 'pending'",
          )
          .bind(params.id),
      );
    }
    await db.batch(statements);
    const after = await getAgentRow(db, params.id);
    await events.send({ kind: 'notification.agent.updated', data: { id: after.id, type, enabled, changed } });
    return [toAgent(after, vars.hostId)];
  },
});
