import * as z from 'zod';
import { route } from '../../core/route';
import { networkInterface } from '../responses';
import { listInterfaces, networkContext } from '../state';

export default route({
  method: 'GET',
  path: '/network/interface',
  permission: 'network:read',
  examples: [{ summary: 'eno1-eno5 and bond0' }],
  summary:
    'The network interfaces (NICs and bonds by default): runtime state, ethtool settings, ifupdown configuration, status',
  response: z.array(networkInterface),
  async handler({ system, vars }) {
    return listInterfaces(networkContext(system, vars));
  },
});
