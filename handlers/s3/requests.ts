/** Request shapes of the S3 routes. */
import * as z from 'zod';
import { absolutePath } from '../core/schemas';
import { shareName } from './names';

const CONTROL = /[\u0000-\u001f\u007f]/;
const credential = (what: string) =>
  z
    .string()
    .min(1, `${what} must not be empty`)
    .max(256)
    .refine((s) => !CONTROL.test(s), `${what} must not contain control characters (line breaks, NUL, …)`);

const port = z
  .string()
  .regex(/^[1-9][0-9]{3,4}$/, 'port: a number 1024-65535 written as a string, without leading zeros')
  .refine((p) => Number(p) >= 1024 && Number(p) <= 65535, 'port: 1024-65535')
  .describe('TCP port, 1024-65535, as a string; not used by another share nor by a listening socket');

export const shareParams = z.strictObject({ share_name: shareName });

export const deleteParams = z.strictObject({
  version: z.string().describe('API version; only `v2` exists (any other answers 404)'),
  share_name: shareName,
});

export const createBody = z.strictObject({
  shareName,
  path: absolutePath.describe('absolute path of an existing directory under one of settings.s3.shareRoots'),
  port,
  rootUser: credential('rootUser').describe('access key (S3 minimum: 3 characters; MinIO refuses `=` and `,`)'),
  rootPassword: credential('rootPassword').describe('secret key (S3 minimum: 8 characters)'),
});
export type CreateBody = z.output<typeof createBody>;

export const updateBody = z
  .strictObject({
    rootUser: credential('rootUser').optional().describe('new access key'),
    rootPassword: credential('rootPassword').optional().describe('new secret key'),
  })
  .refine((b) => b.rootUser !== undefined || b.rootPassword !== undefined, 'give rootUser, rootPassword or both');
export type UpdateBody = z.output<typeof updateBody>;
