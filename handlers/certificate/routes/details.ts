import { route } from '../../core/route';
import { trustDetailsParams } from '../requests';
import { trustDetailsAnswer } from '../responses';
import { readTrusted } from '../trust';

export default route({
  method: 'GET',
  path: '/certificate/:name/details',
  permission: 'certificate:read',
  summary: 'PEM text of one trusted certificate (name with or without .crt)',
  params: trustDetailsParams,
  response: trustDetailsAnswer,
  examples: [
    { summary: 'the demo corporate root CA', params: { name: 'corp-root-ca' } },
    { summary: 'an unknown name', params: { name: 'nosuch-ca.crt' }, status: 404 },
  ],
  async handler({ params, system }) {
    return { certificate: (await readTrusted(system, params.name)).content };
  },
});
