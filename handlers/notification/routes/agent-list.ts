import * as z from 'zod';
import { route } from '../../core/route';
import { agent } from '../responses';
import { listAgentRows, toAgent } from '../store';

export default route({
  method: 'GET',
  path: '/notification/agent',
  permission: 'notification:read',
  examples: [{ summary: 'a fresh demo has no agents' }],
  summary: 'Every notification agent, secrets masked',
  response: z.array(agent),
  async handler({ db, vars }) {
    return (await listAgentRows(db)).map((r) => toAgent(r, vars.hostId));
  },
});
