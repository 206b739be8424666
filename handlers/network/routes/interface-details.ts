import * as z from 'zod';
import { route } from '../../core/route';
import { deviceParams } from '../requests';
import { networkInterface } from '../schemas';
import { describeInterface, networkContext } from '../state';

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
