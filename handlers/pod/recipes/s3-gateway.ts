import type { Recipe } from './types';

/**
 * An S3-compatible object store (Zenko CloudServer) keeping objects and metadata in the pod
 * directory. The keys are placeholders: change them in the pod's compose file before starting it.
 */
export const s3Gateway: Recipe = {
  name: 's3-gateway',
  description:
    'Zenko CloudServer: an S3-compatible endpoint on host port 8000, objects in data/ and metadata in metadata/ of the pod directory. Replace the placeholder keys before starting.',
  images: ['zenko/cloudserver:latest'],
  version: '1.0',
  services: [
    {
      service_name: 's3',
      service_config: {
        image: 'zenko/cloudserver:latest',
        container_name: 's3',
        environment: [
          'REMOTE_MANAGEMENT_DISABLE=1',
          'SCALITY_ACCESS_KEY_ID=CHANGE-ME-ACCESS-KEY',
          'SCALITY_SECRET_ACCESS_KEY=CHANGE-ME-SECRET-KEY',
        ],
        volumes: ['./data:/usr/src/app/localData', './metadata:/usr/src/app/localMetadata'],
        ports: ['8000:8000'],
        restart: 'unless-stopped',
      },
    },
  ],
};
