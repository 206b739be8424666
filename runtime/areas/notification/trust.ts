import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';

/**
 * The certificate authorities outgoing TLS (SMTP, webhooks, Twilio) trusts: Node's bundled roots
 * plus the appliance's own trusted certificates (`paths.caCertificates`, which the certificates
 * area manages: "certificates the system trusts for HTTPS requests"), so a mail relay or webhook
 * receiver with a private CA works once its CA is added there. Read at each send: adding a
 * certificate takes effect without a restart. Undefined when there are none of our own, which
 * leaves Node's defaults alone.
 */
export function trustedCas(dir: string | undefined): string[] | undefined {
  if (!dir) return undefined;
  const own: string[] = [];
  collect(dir, 0, own);
  return own.length ? [...rootCertificates, ...own] : undefined;
}

function collect(dir: string, depth: number, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const p = join(dir, name);
    try {
      const st = statSync(p);
      if (st.isDirectory() && depth < 2) collect(p, depth + 1, out);
      else if (st.isFile() && name.endsWith('.crt') && st.size < 1024 * 1024) {
        const pem = readFileSync(p, 'utf8');
        if (pem.includes('-----BEGIN CERTIFICATE-----')) out.push(pem);
      }
    } catch {
      // A file that vanished or cannot be read is simply not trusted.
    }
  }
}
