import * as z from 'zod';
import { route } from '../../core/route';
import { deviceParams } from '../requests';
import { networkInterface } from '../responses';
import { describeInterface, networkContext } from '../state';

export default route({
  method: 'GET',
  path: '/network/interface/:device_name/details',
  permission: 'network:read',
  examples: [
    { summary: 'the management port eno1', params: { device_name: 'eno1' } },
    { summary: 'the bond', params: { device_name: 'bond0' } },
    { summary: 'an unknown device', params: { device_name: 'nosuchdev0' }, status: 404 },
  ],
  summary: 'One network interface, as a one-element array',
  params: deviceParams,
  response: z.array(networkInterface).length(1),
  async handler({ params, system, vars }) {
    return [await describeInterface(networkContext(system, vars), params.device_name)];
  },
});
