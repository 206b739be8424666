import * as z from 'zod';
import { route } from '../../core/route';
import { CREATE_AGENT_1 } from '../examples';
import { agentIdParams } from '../requests';
import { agent } from '../responses';
import { getAgentRow, toAgent } from '../store';

export default route({
  method: 'GET',
  path: '/notification/agent/:id/details',
  permission: 'notification:read',
  examples: [
    {
      summary: 'agent 1, once the create example made it (a disabled webhook)',
      params: { id: '1' },
      before: [CREATE_AGENT_1],
    },
    { summary: 'no agent 999 on a fresh demo', params: { id: '999' }, status: 404 },
  ],
  summary: 'One notification agent (an array of one), secrets masked',
  params: agentIdParams,
  response: z.array(agent).length(1),
  async handler({ db, params, vars }) {
    return [toAgent(await getAgentRow(db, params.id), vars.hostId)];
  },
});
