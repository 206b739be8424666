/**
 * What the pod routes answer (the spec's "Pod and recipe" resources): `xxxAnswer` for a route's
 * answer and the pieces answers are built of. Routes that answer the tool's output answer
 * `z.string()` in place.
 */
import * as z from 'zod';

export const podService = z.object({
  id: z.string().describe('the systemd unit, `<prefix>-pod-<name>.service`'),
  state: z
    .enum(['offline', 'online', 'disabled'])
    .describe('online: running; offline: enabled but not running; disabled: neither (see the area README)'),
  locked: z.boolean().describe('the unit is masked: it cannot be started or enabled until unmasked'),
});

export const podSummary = z.object({
  name: z.string().describe('`<prefix>-pod-<name>`'),
  service: podService,
});

/** GET /pod */
export const listAnswer = z.array(podSummary);

export const composeFile = z
  .looseObject({
    version: z
      .string()
      .optional()
      .describe('compose file version (obsolete in the Compose Specification, kept as given)'),
    services: z.record(z.string(), z.record(z.string(), z.unknown())).describe('services keyed by service name'),
  })
  .describe('the compose file as stored (validated against the Compose Specification)');

/** GET /pod/{name}/details, POST /pod/{name}/set and update */
export const podDetailAnswer = z.object({
  name: z.string(),
  compose_file: composeFile,
  service: z.array(podService),
});

/** GET /pod/suggested/{name} */
export const recipeAnswer = z.object({
  name: z.string(),
  description: z.string(),
  images: z.array(z.string()),
  version: z.string(),
  services: z.array(
    z.object({
      service_name: z.string(),
      service_config: z.object({
        image: z.string(),
        container_name: z.string(),
        environment: z.array(z.string()),
        volumes: z.array(z.string()),
        ports: z.array(z.string()),
        restart: z.string(),
      }),
    }),
  ),
});

export const inspectAnswer = z.object({
  name: z.string(),
  container_status: z
    .string()
    .describe(
      'first line: running, paused, partial, stopped or none; then one line per container: name service state (status) ports',
    ),
  running_processes: z.string().describe("the compose tool's `top` output as printed"),
});

export const destroyAnswer = z.object({
  containerResponse: z.string().describe('output of compose down'),
  serviceResponse: z.object({
    id: z.string(),
    stopped: z.boolean().describe('systemctl stop succeeded'),
    disabled: z.boolean().describe('systemctl disable succeeded'),
    unitFileRemoved: z.boolean(),
    podFilesRemoved: z.boolean(),
  }),
});

export const testAnswer = z.object({
  name: z.string(),
  data: z.record(z.string(), z.unknown()).describe('the valid fileContents (recipes merged, as they would be stored)'),
  exists: z.boolean(),
});

export const mountOptions = z.object({
  rw: z.boolean(),
  mand: z.boolean(),
  noatime: z.boolean(),
  xattr: z.boolean(),
  posixacl: z.boolean(),
});

/** GET /pod/config */
export const configAnswer = z.object({
  daemonJson: z.record(z.string(), z.unknown()).describe("the engine's daemon.json ({} when absent)"),
  podDataMount: z
    .object({
      source: z.string(),
      mountpoint: z.string(),
      type: z.string(),
      options: mountOptions,
      fs_freq: z.number(),
      fs_passno: z.number(),
    })
    .optional()
    .describe('the fstab entry of the pod data mount location; absent when there is none'),
});

/** POST /pod/config */
export const configSetAnswer = z.object({ podImageFs: z.string(), podDataFs: z.string() });
