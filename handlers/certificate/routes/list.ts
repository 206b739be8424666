import { route } from '../../core/route';
import { path } from '../../core/vars';
import { trustListAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/certificate',
  permission: 'certificate:read',
  summary: 'Names of the trusted certificates: the regular *.crt files of the local trust store directory',
  response: trustListAnswer,
  examples: [{ summary: 'the two CA certificates of the demo trust store' }],
  async handler({ system, vars }) {
    const entries = await system.listDir(path(vars, 'caCertificates'));
    return (entries ?? [])
      .filter((e) => e.type === 'file' && e.name.endsWith('.crt') && !e.name.startsWith('.'))
      .map((e) => e.name);
  },
});
