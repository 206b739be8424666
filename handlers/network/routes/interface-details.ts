import * as z from 'zod';
import { route } from '../../core/route.ts';
import { deviceParams } from '../requests.ts';
import { networkInterface } from '../schemas.ts';
import { describeInterface, networkContext } from '../state.ts';

export default route({
  method: 'GET',
  path: '/network/interface/:device_name/details',
  permission: 'network:read',
  summary: 'One network interface, as a one-element array',
  params: deviceParams,
  response: z.array(networkInterface).length(1),
  async handler({ params, system, vars }) {
    return [await describeInterface(networkContext(system, vars), params.device_name)];
  },
});
