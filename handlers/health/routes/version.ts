import { route } from '../../core/route';
import { HEALTH_VERSION_OP } from '../contract';
import { versionAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/version',
  permission: 'public',
  summary: 'The host version and the API version (no token)',
  examples: [{ summary: "the demo's version" }],
  response: versionAnswer,
  async handler({ system, vars }) {
    const { version } = await system.op<{ version: string }>(HEALTH_VERSION_OP, {});
    return { name: vars.productName, version, api: 'v2' as const };
  },
});
