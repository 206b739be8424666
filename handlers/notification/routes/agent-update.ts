import * as z from 'zod';
import { route } from '../../core/route';
import { ApiError } from '../../core/errors';
import { agentIdParams, agentSchema, updateBody } from '../schemas';
import { getAgentRow, resolveUpdatedConfig, toAgent, validateConfig } from '../store';

export default route({
  method: 'POST',
  path: '/notification/agent/:id/update',
  permission: 'notification:manage',
  examples: [{"summary": "no agent 999 on a fresh demo", "params": {"id": "999"}, "body": {"enabled": false}, "status": 404}],
  summary: 'Change the type, enabled flag and/or configuration of an agent; omitted secrets are kept',
  params: agentIdParams,
  body: updateBody,
  response: z.array(agentSchema).length(1),
  async handler({ db, params, body, events, vars }) {
    const before = await getAgentRow(db, params.id);
    const storedJson: Record<string, unknown> = JSON.parse(before.json);
    const type = body.type ?? before.type;
    let json: Record<string, unknown>;
    if (body.json !== undefined) json = resolveUpdatedConfig(type, body.json, { type: before.type, json: storedJson });
    else if (type !== before.type) {
      throw new ApiError('validation_failed', 'invalid body: body.json: required when type changes', {
        issues: [{ path: 'body.json', message: 'required when type changes' }],
      });
    } else json = validateConfig(type, storedJson);
    const enabled = body.enabled ?? before.enabled === 1;

    const changed: string[] = [];
    if (type !== before.type) changed.push('type');
    if (enabled !== (before.enabled === 1)) changed.push('enabled');
    if (JSON.stringify(json) !== before.json) changed.push('json');

    const now = new Date().toISOString();
    const statements = [
      db.prepare('UPDATE notification_agents SET type = ?, enabled = ?, json = ?, updated_at = ? WHERE id = ?').bind(type, enabled ? 1 : 0, JSON.stringify(json), now, params.id),
    ];
    // A disabled agent receives nothing more, including retries of events it was due earlier.
    if (!enabled) {
      statements.push(
        db.prepare("UPDATE deliveries SET state = 'cancelled', last_error = 'agent disabled' WHERE agent_id = ? AND state = 'pending'").bind(params.id),
      );
    }
    await db.batch(statements);
    const after = await getAgentRow(db, params.id);
    await events.send({ kind: 'notification.agent.updated', data: { id: after.id, type, enabled, changed } });
    return [toAgent(after, vars.hostId)];
  },
});
