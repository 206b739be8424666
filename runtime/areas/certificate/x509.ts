/**
 * PEM and X.509 through node:crypto: blocks are located by their BEGIN/END lines, and every
 * block's content is decoded and checked by `X509Certificate` / `createPrivateKey` (never by
 * hand). Nothing here returns or logs private key material.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { CertInfo, InspectResult, Piece, PieceProblem } from '../../../handlers/certificate/contract';

export interface PemBlock {
  label: string;
  text: string;
}

const BEGIN = /^-----BEGIN ([A-Z0-9 ]{1,64})-----$/;

/**
 * The PEM blocks of a text, in order (their content is not decoded here). One pass over the lines
 * (a regex with a lazy body and a back-reference goes quadratic on many unterminated BEGIN lines);
 * a block without its END line is dropped, text between blocks is ignored.
 */
export function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  const lines = text.split('\n');
  let label: string | undefined;
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    const begin = BEGIN.exec(l);
    if (begin) {
      label = begin[1];
      start = i;
    } else if (label !== undefined && l === `-----END ${label}-----`) {
      out.push({
        label,
        text: `${lines
          .slice(start, i + 1)
          .map((x) => x.trim())
          .join('\n')}\n`,
      });
      label = undefined;
    }
  }
  return out;
}

export function certInfo(c: X509Certificate): CertInfo {
  const key = c.publicKey;
  const d = key.asymmetricKeyDetails ?? {};
  const kp = keyProblem(key);
  return {
    subject: c.subject.replace(/\n/g, ', '),
    issuer: c.issuer.replace(/\n/g, ', '),
    serialNumber: c.serialNumber,
    notBefore: new Date(c.validFrom).toISOString(),
    notAfter: new Date(c.validTo).toISOString(),
    ca: c.ca,
    selfSigned: c.subject === c.issuer && c.verify(key),
    keyType: key.asymmetricKeyType ?? 'unknown',
    ...(d.modulusLength !== undefined ? { keyBits: d.modulusLength } : {}),
    ...(d.namedCurve !== undefined ? { curve: d.namedCurve } : {}),
    fingerprint256: c.fingerprint256,
    ...(kp !== undefined ? { keyProblem: kp } : {}),
  };
}

/** For `certificate/inspect`: every certificate of a PEM text, and what else it holds. */
export function inspectPem(text: string): InspectResult {
  const blocks = pemBlocks(text);
  const certificates: CertInfo[] = [];
  const normalized: string[] = [];
  const otherBlocks: string[] = [];
  for (const [i, b] of blocks.entries()) {
    if (b.label !== 'CERTIFICATE') {
      otherBlocks.push(b.label);
      continue;
    }
    try {
      const c = new X509Certificate(b.text);
      certificates.push(certInfo(c));
      normalized.push(c.toString());
    } catch (e) {
      return {
        certificates,
        normalized: '',
        otherBlocks,
        error: `block ${i + 1} is not a valid certificate (${reason(e)})`,
      };
    }
  }
  const layout = pemLayoutProblem(text);
  return { certificates, normalized: normalized.join(''), otherBlocks, ...(layout ? { layout } : {}) };
}

const BASE64_LINE = /^[A-Za-z0-9+/]+$/;
const BASE64_LAST = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Why a text is not exactly one PEM block with nothing but whitespace around it and nothing but
 * base64 inside (node:crypto skips text around blocks and tolerates some inside; the trust store
 * takes the text as the one thing it says it is).
 */
export function pemLayoutProblem(text: string): string | undefined {
  const lines = text.trim().split(/\r?\n/);
  const begin = BEGIN.exec(lines[0] ?? '');
  if (!begin) return 'has text before the PEM block; give the block alone';
  if (lines.at(-1) !== `-----END ${begin[1]}-----`) return 'has text after the PEM block; give the block alone';
  const body = lines.slice(1, -1);
  if (body.length === 0) return 'the PEM block is empty';
  for (const [i, l] of body.entries()) {
    if (!(i === body.length - 1 ? BASE64_LAST : BASE64_LINE).test(l))
      return `line ${i + 2} of the PEM block is not base64 (${l.includes('\0') ? 'a NUL character' : 'other characters'}); give the block as exported`;
  }
  return undefined;
}

function reason(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/^error:[0-9A-F]+:/, '').slice(0, 200);
}

/** Key algorithms and sizes the appliance serves: RSA 2048-16384, ECDSA P-256/384/521, Ed25519. */
export function keyProblem(key: KeyObject): string | undefined {
  const type = key.asymmetricKeyType;
  const d = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa') {
    const bits = d.modulusLength ?? 0;
    if (bits < 2048) return `RSA key of ${bits} bits is too small (at least 2048)`;
    if (bits > 16384) return `RSA key of ${bits} bits is too large (at most 16384)`;
    return undefined;
  }
  if (type === 'ec') {
    return ['prime256v1', 'secp384r1', 'secp521r1'].includes(d.namedCurve ?? '')
      ? undefined
      : `EC curve ${d.namedCurve ?? '?'} is not supported (P-256, P-384, P-521)`;
  }
  if (type === 'ed25519') return undefined;
  return `key type ${type ?? 'unknown'} is not supported (RSA, ECDSA P-256/P-384/P-521, Ed25519)`;
}

export interface ParsedPieces {
  /** Each given piece as it will be stored: certificates re-encoded, the key's own block only. */
  normalized: Partial<Record<Piece, string>>;
  root?: X509Certificate;
  intermediate?: X509Certificate[];
  server?: X509Certificate;
  privateKey?: KeyObject;
}

/** One piece's PEM → certificates or key; a problem names why it cannot be used. */
function parsePiece(piece: Piece, text: string, out: ParsedPieces, problems: PieceProblem[]): void {
  const say = (message: string): void => void problems.push({ piece, message });
  const blocks = pemBlocks(text);
  if (blocks.length === 0) return say('no PEM block found');
  if (piece === 'private_key') {
    const keys = blocks.filter((b) => b.label !== 'EC PARAMETERS');
    if (keys.some((b) => b.label === 'ENCRYPTED PRIVATE KEY'))
      return say('the private key is encrypted; give it without a passphrase');
    if (keys.length !== 1 || !/^(|RSA |EC )PRIVATE KEY$/.test(keys[0].label))
      return say(`must be exactly one private key (found ${keys.map((b) => b.label).join(', ')})`);
    try {
      out.privateKey = createPrivateKey({ key: keys[0].text, format: 'pem' });
    } catch (e) {
      return say(`not a valid private key (${reason(e)})`);
    }
    out.normalized.private_key = keys[0].text;
    const kp = keyProblem(out.privateKey);
    if (kp) say(kp);
    return;
  }
  if (blocks.some((b) => /PRIVATE KEY/.test(b.label))) return say('contains a private key; give it as private_key');
  const other = blocks.find((b) => b.label !== 'CERTIFICATE');
  if (other) return say(`holds a ${other.label} block; only certificates belong here`);
  const certs: X509Certificate[] = [];
  for (const [i, b] of blocks.entries()) {
    try {
      certs.push(new X509Certificate(b.text));
    } catch (e) {
      return say(`certificate ${i + 1} does not parse (${reason(e)})`);
    }
  }
  if (piece !== 'intermediate' && certs.length !== 1) {
    return say(
      piece === 'server'
        ? `must be one certificate (found ${certs.length}); CA certificates go in intermediate and root`
        : `must be one certificate (found ${certs.length})`,
    );
  }
  if (piece === 'intermediate') out.intermediate = certs;
  else out[piece] = certs[0];
  out.normalized[piece] = certs.map((c) => c.toString()).join('');
}

const signed = (child: X509Certificate, parent: X509Certificate) =>
  child.checkIssued(parent) && child.verify(parent.publicKey);

/**
 * Checks a complete set of pieces (what will be on disk after the swap): each parses, the key
 * matches the server certificate, the chain verifies, dates are valid now, key types and sizes
 * are supported, and Node's TLS accepts the certificate chain with the key.
 */
export function checkPieces(
  texts: Partial<Record<Piece, string>>,
  now = new Date(),
): { problems: PieceProblem[]; parsed: ParsedPieces } {
  const problems: PieceProblem[] = [];
  const parsed: ParsedPieces = { normalized: {} };
  for (const piece of ['server', 'private_key', 'intermediate', 'root'] as const) {
    const t = texts[piece];
    if (t !== undefined) parsePiece(piece, t, parsed, problems);
  }
  if (texts.server === undefined)
    problems.push({
      piece: 'server',
      message: 'a server certificate is required (HTTPS cannot be served without one)',
    });
  if (texts.private_key === undefined)
    problems.push({ piece: 'private_key', message: 'a private key is required (HTTPS cannot be served without one)' });
  if (problems.length) return { problems, parsed };

  const say = (piece: Piece, message: string) => problems.push({ piece, message });
  const named: [Piece, X509Certificate, string][] = [
    ['server', parsed.server!, 'the server certificate'],
    ...(parsed.intermediate ?? []).map((c, i): [Piece, X509Certificate, string] => [
      'intermediate',
      c,
      `intermediate certificate ${i + 1}`,
    ]),
    ...(parsed.root ? [['root', parsed.root, 'the root certificate'] as [Piece, X509Certificate, string]] : []),
  ];
  for (const [piece, c, what] of named) {
    if (new Date(c.validTo) < now) say(piece, `${what} expired on ${new Date(c.validTo).toISOString()}`);
    else if (new Date(c.validFrom) > now)
      say(piece, `${what} is not valid before ${new Date(c.validFrom).toISOString()}`);
    const kp = keyProblem(c.publicKey);
    if (kp) say(piece, `${what}: ${kp}`);
    if (piece !== 'server' && !c.ca) say(piece, `${what} is not a CA certificate (basicConstraints CA:TRUE)`);
  }
  if (!parsed.server!.checkPrivateKey(parsed.privateKey!)) say('private_key', 'does not match the server certificate');
  // the chain: server ← intermediate[0] ← … ← root
  let child = parsed.server!;
  let childName = 'the server certificate';
  for (const [i, c] of (parsed.intermediate ?? []).entries()) {
    if (!signed(child, c)) {
      say(
        'intermediate',
        `intermediate certificate ${i + 1} (${c.subject.replace(/\n/g, ', ')}) did not sign ${childName} (issued by ${child.issuer.replace(/\n/g, ', ')}); give the chain from the server upwards`,
      );
      break;
    }
    child = c;
    childName = `intermediate certificate ${i + 1}`;
  }
  if (parsed.root && problems.every((p) => p.piece !== 'intermediate')) {
    if (!signed(parsed.root, parsed.root)) say('root', 'the root certificate is not self-signed');
    else if (!signed(child, parsed.root))
      say(
        'root',
        `the root certificate (${parsed.root.subject.replace(/\n/g, ', ')}) did not sign ${childName} (issued by ${child.issuer.replace(/\n/g, ', ')})`,
      );
  }
  if (problems.length === 0) {
    try {
      const n = parsed.normalized;
      createSecureContext({ cert: servedChain(n.server!, n.intermediate), key: n.private_key });
    } catch (e) {
      say('server', `TLS refuses this certificate and key: ${reason(e)}`);
    }
  }
  return { problems, parsed };
}

/** What HTTPS serves: the server certificate followed by the intermediate(s). */
export function servedChain(server: string, intermediate?: string): string {
  const s = server.endsWith('\n') ? server : `${server}\n`;
  return intermediate ? s + intermediate : s;
}
