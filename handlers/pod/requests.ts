/** What a client sends to the pod routes: path params, the log query and the bodies. */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { daemonJson } from './daemon-json';

/**
 * A pod name in the path: lower-case letters, digits, `_` and `-` (compose project names),
 * starting with a letter or digit. A name that already carries `<prefix>-pod-` is not prefixed
 * twice (README "Names").
 */
export const podNameParams = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'pod name: 1-63 of a-z 0-9 _ -, starting with a letter or digit')
    .describe('pod name, with or without the `<prefix>-pod-` prefix'),
});

export const recipeNameParams = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'recipe name: a-z 0-9 -')
    .describe('recipe name'),
});

const fileContents = z
  .union([
    z.record(z.string(), z.unknown()),
    z
      .string()
      .min(1)
      .max(512 * 1024),
  ])
  .describe('the compose file: an object (version, services, …) or its YAML/JSON text');

const recipes = z
  .array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'recipe name: a-z 0-9 -'))
  .max(16)
  .refine((a) => new Set(a).size === a.length, 'a recipe is named twice')
  .describe('recipe names whose services are merged into the compose file (a service name taken twice is a 409)');

export const setBody = z.strictObject({ fileContents, recipes: recipes.optional() });
export const updateBody = z.strictObject({ fileContents, recipes: recipes.optional() });
export const testBody = z.strictObject({ fileContents });

export const logQuery = z.strictObject({
  lines: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/, 'lines: a positive whole number')
    .transform(Number)
    .optional()
    .describe('newest lines to return (default settings.pod.logDefaultLines, at most logMaxLines)'),
  since: z
    .string()
    .max(64)
    .regex(
      /^(\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?|-\d{1,6} ?(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?|w|weeks?)|today|yesterday|now)$/,
      'since: YYYY-MM-DD[ HH:MM[:SS]], -<n><unit> (e.g. -1h, -30min), today, yesterday or now',
    )
    .optional()
    .describe('only entries at or after this time (journalctl --since)'),
});

/** A filesystem: an existing block device (`/dev/…`) or a mounted path under settings.pod.mountRoots. */
const fsRef = absolutePath.refine((p) => !/[\s\\#]/.test(p), 'must not contain blanks, backslashes or #');

export const configBody = z
  .strictObject({
    // the keys of daemon.json the appliance accepts, with their checked values: ./daemon-json.ts
    configJson: daemonJson
      .optional()
      .describe('the engine daemon.json to write (known keys only, typed); not sent: daemon.json is kept'),
    podImageFs: fsRef
      .optional()
      .describe(
        'where images live: a block device with a filesystem, mounted at data-root through fstab, or a mounted path used as data-root; not sent: kept',
      ),
    podDataFs: fsRef
      .optional()
      .describe(
        'the pod data filesystem: a block device, or a mounted path bind-mounted at the pod data mount location; not sent: kept (required the first time)',
      ),
  })
  .refine(
    (b) => b.configJson !== undefined || b.podImageFs !== undefined || b.podDataFs !== undefined,
    'send at least one of configJson, podImageFs, podDataFs',
  );
