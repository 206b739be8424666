import * as z from 'zod';
import type { RouteModule } from '../../handlers/core/route';
import add from '../../handlers/certificate/routes/add';
import commit from '../../handlers/certificate/routes/commit';
import details from '../../handlers/certificate/routes/details';
import ingest from '../../handlers/certificate/routes/ingest';
import list from '../../handlers/certificate/routes/list';
import regenerate from '../../handlers/certificate/routes/regenerate';
import remove from '../../handlers/certificate/routes/remove';
import retrieve from '../../handlers/certificate/routes/retrieve';

/** Every certificate route, in the order of dist/manifest.json (by path), as an example runner meets them. */
export const CERTIFICATE_ROUTES: RouteModule[] = [list, details, add, commit, ingest, regenerate, remove, retrieve];

export const errorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** `path: message` of a 400's issues. */
export function issuesOf(json: unknown): string[] {
  return (errorBody.parse(json).error.issues ?? []).map((i) => `${i.path}: ${i.message}`);
}

export const errorCode = (json: unknown) => errorBody.parse(json).error.code;
export const errorMessage = (json: unknown) => errorBody.parse(json).error.message;

/** update-ca-certificates' argv for a host's configured paths. */
export function updateArgv(
  paths: Record<string, string>,
  fresh: boolean,
  bin = '/usr/sbin/update-ca-certificates',
): string[] {
  return [
    bin,
    ...(fresh ? ['--fresh'] : []),
    '--certsconf',
    paths.caCertificatesConf,
    '--certsdir',
    paths.caCertificatesShare,
    '--localcertsdir',
    paths.caCertificates,
    '--etccertsdir',
    paths.sslCerts,
    '--hooksdir',
    paths.caCertificatesHooks,
  ];
}

export const UPDATE_OUTPUT =
  'Updating certificates in /etc/ssl/certs...\n1 added, 0 removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n';
export const FRESH_OUTPUT =
  'Clearing symlinks in /etc/ssl/certs...\ndone.\nUpdating certificates in /etc/ssl/certs...\n1 added, 0 removed; done.\nRunning hooks in /etc/ca-certificates/update.d...\ndone.\n';
