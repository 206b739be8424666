/** Answer shapes of the S3 routes (spec "S3 share" object). */
import * as z from 'zod';

const shareFields = {
  shareName: z.string().describe('share name'),
  path: z
    .string()
    .describe('filesystem path exported (the real path, symlinks resolved, as stored in the environment file)'),
  enabled: z.boolean().describe('true when `systemctl is-enabled` says enabled (the service starts at boot)'),
  port: z.string().describe('TCP port the S3 service listens on'),
  user: z.string().describe('account the daemon runs as (User= of the unit; root when the unit sets none)'),
  rootUser: z.string().describe('access key'),
  raw: z.string().describe('text of the service unit definition'),
};

export const shareListed = z.strictObject({
  ...shareFields,
  rootPassword: z
    .string()
    .describe('secret key, masked: every character but the last two replaced by `*` (all of them when shorter than 8)'),
});
export type ShareListed = z.output<typeof shareListed>;

export const shareListAnswer = z.record(z.string(), shareListed).describe('object keyed by share name');

export const shareDetailsAnswer = z.strictObject({
  ...shareFields,
  rootPassword: z.string().describe('secret key, in clear'),
  conf: z.string().describe('text of the environment file (root user, root password, path, port)'),
});
export type ShareDetailsAnswer = z.output<typeof shareDetailsAnswer>;

export const shareChangedAnswer = z.strictObject({
  shareName: z.string(),
  serviceName: z.string().describe('`s3-<shareName>.service`'),
  raw: z.string().describe('create: the unit text; update: the environment file text'),
  // an extension the spec does not show (README "Answers"); a string like the spec's dfs `warnings`
  warnings: z
    .string()
    .min(1)
    .optional()
    .describe(
      'present only when the credentials are below the S3 minimums (access key 3, secret key 8 characters): one line per problem; the share exists but its service will not start',
    ),
});

export const deletedAnswer = z.string().describe('success message naming the service');
