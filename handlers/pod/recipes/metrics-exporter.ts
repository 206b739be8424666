import type { Recipe } from './types';

/**
 * Prometheus node exporter: CPU, memory, load and network metrics (the kernel's, which a
 * container sees) on host port 9100. It runs without host mounts or host namespaces, which the
 * pod limits refuse; per-filesystem metrics of the host therefore are not included.
 */
export const metricsExporter: Recipe = {
  name: 'metrics-exporter',
  description: 'Prometheus node exporter on host port 9100 (CPU, memory, load, network; no host mounts).',
  images: ['prom/node-exporter:v1.8.2'],
  version: '1.0',
  services: [
    {
      service_name: 'node-exporter',
      service_config: {
        image: 'prom/node-exporter:v1.8.2',
        container_name: 'node-exporter',
        environment: [],
        volumes: [],
        ports: ['9100:9100'],
        restart: 'unless-stopped',
      },
    },
  ],
};
