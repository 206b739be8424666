import type { Recipe } from './types';

const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = `${UPPER_DIGITS}abcdefghijklmnopqrstuvwxyz`;

/**
 * An S3-compatible object store (Zenko CloudServer) keeping objects and metadata in the pod
 * directory. Its endpoint is meant for the network's S3 clients, so it is published on every
 * address; the access and secret keys are made for each pod when it is set (AWS's shapes: 20
 * upper-case letters and digits, 40 letters and digits, about 238 bits), never shipped.
 */
export const s3Gateway: Recipe = {
  name: 's3-gateway',
  description:
    "Zenko CloudServer: an S3-compatible endpoint on host port 8000, objects in data/ and metadata in metadata/ of the pod directory. Its access and secret keys (SCALITY_ACCESS_KEY_ID, SCALITY_SECRET_ACCESS_KEY) are generated for each pod: read them in the pod's compose file (GET /pod/{name}/details).",
  images: ['zenko/cloudserver:latest'],
  version: '1.0',
  services: [
    {
      service_name: 's3',
      service_config: {
        image: 'zenko/cloudserver:latest',
        container_name: 's3',
        environment: ['REMOTE_MANAGEMENT_DISABLE=1'],
        volumes: ['./data:/usr/src/app/localData', './metadata:/usr/src/app/localMetadata'],
        ports: ['8000:8000'],
        restart: 'unless-stopped',
      },
      generated: [
        { name: 'SCALITY_ACCESS_KEY_ID', chars: 20, alphabet: UPPER_DIGITS },
        { name: 'SCALITY_SECRET_ACCESS_KEY', chars: 40, alphabet: ALNUM },
      ],
    },
  ],
};
