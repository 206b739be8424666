import { ApiError, notFound, validationFailed } from '../core/errors';
import type { SystemClient } from '../core/system';
import { bin, path, type Vars } from '../core/vars';
import { READ_OP, type CertInfo, type ReadPayload, type ReadResult } from './contract';
import { parseUpdateCaCertificates } from './parse/update-ca-certificates';

/** `<caCertificates>/<name>.crt` (name already validated by `trustName`). */
export function trustFile(vars: Vars, name: string): string {
  return `${path(vars, 'caCertificates')}/${name}.crt`;
}

/** update-ca-certificates with every location it uses given explicitly (the configured paths). */
export function updateArgv(vars: Vars, fresh: boolean): string[] {
  return [
    bin(vars, 'updateCaCertificates'),
    ...(fresh ? ['--fresh'] : []),
    '--certsconf',
    path(vars, 'caCertificatesConf'),
    '--certsdir',
    path(vars, 'caCertificatesShare'),
    '--localcertsdir',
    path(vars, 'caCertificates'),
    '--etccertsdir',
    path(vars, 'sslCerts'),
    '--hooksdir',
    path(vars, 'caCertificatesHooks'),
  ];
}

/**
 * Runs update-ca-certificates after the trust store changed and answers its output; when it
 * fails, `undo` puts the store back (the request failed, so the change must not stay).
 */
export async function applyTrustStore(
  system: SystemClient,
  vars: Vars,
  fresh: boolean,
  undo: () => Promise<unknown>,
): Promise<string> {
  try {
    const r = await system.run(updateArgv(vars, fresh));
    parseUpdateCaCertificates(r.stdout, r.stderr);
    return r.stdout;
  } catch (e) {
    await undo();
    throw e;
  }
}

/** The trust store file of `name` and its text; 404 when absent, 409 when not a regular file. */
export async function readTrusted(system: SystemClient, name: string): Promise<{ path: string; content: string }> {
  const r = await system.op<ReadResult>(READ_OP, { kind: 'trusted', name } satisfies ReadPayload);
  if (r.content === null) throw notFound(`no trusted certificate named ${name}`);
  return { path: r.path, content: r.content };
}

/**
 * Why certificates may not join the trust store, as the 400 to answer (or undefined): none,
 * a non-CA without `allowLeaf`, outside its validity without `allowExpired`.
 */
export function trustProblem(
  certs: CertInfo[],
  o: { allowLeaf: boolean; allowExpired: boolean; now: Date },
): ApiError | undefined {
  if (certs.length === 0) return validationFailed('body.certificate', 'no PEM certificate found');
  for (const [i, c] of certs.entries()) {
    const which = certs.length > 1 ? `certificate ${i + 1} (${c.subject})` : `the certificate (${c.subject})`;
    if (!c.ca && !o.allowLeaf)
      return validationFailed('body.certificate', `${which} is not a CA certificate; set allowLeaf to trust it anyway`);
    if (!o.allowExpired && new Date(c.notAfter) < o.now)
      return validationFailed(
        'body.certificate',
        `${which} expired on ${c.notAfter}; set allowExpired to trust it anyway`,
      );
    if (!o.allowExpired && new Date(c.notBefore) > o.now)
      return validationFailed(
        'body.certificate',
        `${which} is not valid before ${c.notBefore}; set allowExpired to trust it anyway`,
      );
  }
  return undefined;
}
