import type { Recipe } from './types';

/** A static web server for files in the pod's own `html` directory. */
export const webServer: Recipe = {
  name: 'web-server',
  description: 'nginx serving the static files of the pod directory html/ on host port 8081 (read-only).',
  images: ['nginx:1.27-alpine'],
  version: '1.0',
  services: [
    {
      service_name: 'web',
      service_config: {
        image: 'nginx:1.27-alpine',
        container_name: 'web',
        environment: ['NGINX_ENTRYPOINT_QUIET_LOGS=1'],
        volumes: ['./html:/usr/share/nginx/html:ro'],
        ports: ['8081:80'],
        restart: 'unless-stopped',
      },
    },
  ],
};
