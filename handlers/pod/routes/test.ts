import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { podExists, podRef, validateCompose } from '../pod';
import { podNameParams, testBody } from '../requests';
import { testAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/pod/:name/test',
  permission: 'pod:read',
  summary:
    'Validate a compose file as set would (Compose Specification + the appliance limits) without writing anything; says whether the pod exists',
  params: podNameParams,
  body: testBody,
  response: testAnswer,
  examples: [
    {
      summary: 'a valid file for a new pod',
      params: { name: 'site' },
      body: {
        fileContents: {
          version: '3.8',
          services: {
            web: { image: 'nginx:1.27-alpine', ports: ['18080:80'], volumes: ['./html:/usr/share/nginx/html:ro'] },
          },
        },
      },
    },
    {
      summary: 'YAML text',
      params: { name: 'web' },
      body: { fileContents: 'version: "3.8"\nservices:\n  web:\n    image: nginx:1.27-alpine\n' },
    },
    {
      summary: 'a host bind mount of /etc is refused',
      params: { name: 'site' },
      body: {
        fileContents: {
          version: '3.8',
          services: { web: { image: 'nginx:1.27-alpine', volumes: ['/etc:/host-etc'] } },
        },
      },
      status: 400,
    },
  ],
  async handler({ params, body, system, vars }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const ref = podRef(vars, s, params.name);
    const exists = await podExists(system, ref);
    const data = await validateCompose(system, {
      project: ref.project,
      fileContents: body.fileContents,
      ignoreOwnPorts: exists,
      requireVersion: true,
    });
    return { name: ref.project, data, exists };
  },
});
