/** Request shapes of the certificate routes. */
import * as z from 'zod';
import { trustName } from './names';

const pem = (what: string) =>
  z
    .string()
    .max(256 * 1024)
    .describe(what);

export const trustAddBody = z.strictObject({
  name: trustName,
  certificate: pem('PEM text of one or more X.509 certificates (CA certificates unless allowLeaf)'),
  allowLeaf: z
    .boolean()
    .default(false)
    .describe('also accept certificates that are not CAs (basicConstraints CA:FALSE or absent)'),
  allowExpired: z.boolean().default(false).describe('also accept expired or not yet valid certificates'),
});

export const trustRemoveBody = z.strictObject({ name: trustName });

export const trustDetailsParams = z.strictObject({ name: trustName });

export const retrieveBody = z.strictObject({
  pieces: z
    .strictObject({
      root: z.boolean().optional(),
      intermediate: z.boolean().optional(),
      server: z.boolean().optional(),
      private_key: z.boolean().optional().describe('needs certificate:manage'),
    })
    .describe('the pieces to return: only those set true are returned'),
});

export const ingestBody = z.strictObject({
  pieces: z
    .strictObject({
      root: pem('PEM of the root CA certificate; empty string removes it').optional(),
      intermediate: pem(
        'PEM of the intermediate CA certificate(s), nearest the server first; empty string removes them',
      ).optional(),
      server: pem('PEM of the server (leaf) certificate').optional(),
      private_key: pem('PEM of the unencrypted private key of the server certificate').optional(),
    })
    .refine((p) => Object.values(p).some((v) => v !== undefined), 'give at least one piece')
    .describe('new PEM text per piece; pieces not given stay as they are'),
});
