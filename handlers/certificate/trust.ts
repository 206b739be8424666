import { ApiError, notFound, validationFailed } from '../core/errors';
import { commandFailed, type SystemClient } from '../core/system';
import { READ_OP, type CertInfo, type ReadPayload, type ReadResult, type TrustResult } from './contract';
import { parseUpdateCaCertificates } from './parse/update-ca-certificates';

/**
 * The answer's first line: which file went or came, and what it held (the tool's own summary
 * counts links, e.g. `143 added, 0 removed` after a `--fresh` remove, and names nothing).
 */
export function trustHeadline(
  action: 'add' | 'remove',
  file: string,
  certs: { subject: string; fingerprint256: string }[],
): string {
  const what = certs.map((c) => `${c.subject}, SHA-256 ${c.fingerprint256}`).join('; ');
  return `${action === 'add' ? 'Added' : 'Removed'} ${file}${what ? ` (${what})` : ''}.`;
}

/**
 * The answer of a trust store change (TRUST_OP): a line naming the file and its certificate, then
 * the tool's output, or its failure as the error
 * the tool's run would have been (504 `command_timeout`, 502 `command_failed`, 502 `bad_gateway`
 * for output without its summary line), saying whether the store was put back.
 */
export function trustAnswer(r: TrustResult, action: 'add' | 'remove'): string {
  if (r.ok) return `${trustHeadline(action, r.file, r.certificates)}\n${r.output}`;
  const f = r.failure;
  const note = r.restored
    ? 'the trust store was put back as it was'
    : 'the trust store could not be put back yet; the repair is retried before the next change and at start';
  const head = r.message ? `${r.message}: ` : '';
  if (f.timedOut)
    throw new ApiError(
      'command_timeout',
      `${head}update-ca-certificates did not finish within its time limit (settings.certificate.trustTimeoutMs); ${note}`,
      {
        details: { command: f.command, durationMs: f.durationMs },
      },
    );
  if (f.code !== 0) {
    const e = commandFailed(f.command, { ...f, signal: null, truncated: false });
    throw new ApiError('command_failed', `${head}${e.message}; ${note}`, { details: e.details });
  }
  // exit 0 without the summary line: the parser names what is missing
  let why = 'update-ca-certificates did not update the store';
  try {
    parseUpdateCaCertificates(f.stdout, f.stderr);
  } catch (e) {
    if (e instanceof Error) why = e.message;
  }
  throw new ApiError('bad_gateway', `${head}${why}; ${note}`);
}

/** The trust store file of `name` and its text; 404 when absent, 409 when not a regular file. */
export async function readTrusted(system: SystemClient, name: string): Promise<{ path: string; content: string }> {
  const r = await system.op<ReadResult>(READ_OP, { kind: 'trusted', name } satisfies ReadPayload);
  if (r.content === null) throw notFound(`no trusted certificate named ${name}`);
  return { path: r.path, content: r.content };
}

/**
 * Why certificates may not join the trust store, as the 400 to answer (or undefined): none,
 * a non-CA without `allowLeaf`, a key the appliance does not accept, outside its validity
 * without `allowExpired`.
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
    // the rule ingest applies to the appliance's own chain (RSA under 2048 bits is refused)
    if (c.keyProblem) return validationFailed('body.certificate', `${which}: ${c.keyProblem}`);
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
