/**
 * OpenSSH public key blobs (RFC 4253 §6.6, RFC 5656, PROTOCOL.certkeys, PROTOCOL.u2f): the
 * base64 field of a key line decodes to a length-prefixed key type name followed by that type's
 * public fields. This module decodes the blob, checks every field has the size its type needs
 * and that nothing trails, and computes the MD5 fingerprint `ssh-keygen -l -E md5` prints.
 * Pure: no bindings, works in a Workers isolate (atob, DataView).
 */
import { md5ColonHex } from './md5';

/** Plain key types and the wire layout of their public fields. */
type FieldKind = 'mpint' | 'ed25519' | 'curve' | 'point' | 'string';
interface PlainType {
  fields: FieldKind[];
  /** ecdsa: the curve name the blob must carry, and the point's uncompressed length */
  curve?: { name: string; pointLength: number; bits: number };
}

const ECDSA = (name: string, pointLength: number, bits: number): PlainType => ({
  fields: ['curve', 'point'],
  curve: { name, pointLength, bits },
});

export const PLAIN_TYPES: Record<string, PlainType> = {
  'ssh-rsa': { fields: ['mpint', 'mpint'] },
  'ssh-dss': { fields: ['mpint', 'mpint', 'mpint', 'mpint'] },
  'ecdsa-sha2-nistp256': ECDSA('nistp256', 65, 256),
  'ecdsa-sha2-nistp384': ECDSA('nistp384', 97, 384),
  'ecdsa-sha2-nistp521': ECDSA('nistp521', 133, 521),
  'ssh-ed25519': { fields: ['ed25519'] },
  'sk-ecdsa-sha2-nistp256@openssh.com': {
    fields: ['curve', 'point', 'string'],
    curve: { name: 'nistp256', pointLength: 65, bits: 256 },
  },
  'sk-ssh-ed25519@openssh.com': { fields: ['ed25519', 'string'] },
};

/** `<plain>-cert-v01@openssh.com` (the sk types keep their `@openssh.com` once). */
export const CERT_TYPES: Record<string, string> = Object.fromEntries(
  Object.keys(PLAIN_TYPES).map((t) => [
    t.endsWith('@openssh.com') ? t.replace('@openssh.com', '-cert-v01@openssh.com') : `${t}-cert-v01@openssh.com`,
    t,
  ]),
);

export function isKeyType(t: string): boolean {
  return t in PLAIN_TYPES || t in CERT_TYPES;
}

export interface DecodedKey {
  /** the key type of the line (a certificate type for certificates) */
  type: string;
  /** the type of the key itself (for a certificate, the certified key's type) */
  plainType: string;
  certificate: boolean;
  /** modulus bits for RSA/DSA, curve bits for ECDSA, 256 for Ed25519 */
  bits: number;
  /** colon hex MD5 of the plain public key blob, as `ssh-keygen -l -E md5` prints it */
  fingerprint: string;
}

export class KeyBlobError extends Error {}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Strict base64 (the alphabet, padding to a multiple of 4): atob alone also accepts spaces. */
export function decodeBase64(text: string): Uint8Array {
  if (!BASE64.test(text) || text.length % 4 !== 0) throw new KeyBlobError('the key is not valid base64');
  let bin: string;
  try {
    bin = atob(text);
  } catch {
    throw new KeyBlobError('the key is not valid base64');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

class Reader {
  private pos = 0;
  private readonly view: DataView;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  get offset(): number {
    return this.pos;
  }
  get done(): boolean {
    return this.pos === this.buf.length;
  }
  u32(what: string): number {
    if (this.pos + 4 > this.buf.length) throw new KeyBlobError(`the key blob ends inside ${what}`);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }
  u64(what: string): void {
    if (this.pos + 8 > this.buf.length) throw new KeyBlobError(`the key blob ends inside ${what}`);
    this.pos += 8;
  }
  bytes(what: string): Uint8Array {
    const n = this.u32(what);
    if (n > this.buf.length - this.pos) throw new KeyBlobError(`the key blob ends inside ${what}`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  text(what: string): string {
    const b = this.bytes(what);
    let s = '';
    for (const c of b) {
      if (c < 0x20 || c > 0x7e) throw new KeyBlobError(`${what} is not printable ASCII`);
      s += String.fromCharCode(c);
    }
    return s;
  }
  slice(from: number, to: number): Uint8Array {
    return this.buf.subarray(from, to);
  }
}

/** A positive mpint in canonical form; returns its bit length. */
function mpintBits(b: Uint8Array, what: string): number {
  if (b.length === 0) throw new KeyBlobError(`${what} is zero`);
  if (b[0] & 0x80) throw new KeyBlobError(`${what} is negative`);
  if (b[0] === 0 && (b.length === 1 || !(b[1] & 0x80)))
    throw new KeyBlobError(`${what} has a superfluous leading zero`);
  const first = b[0] === 0 ? 1 : 0;
  if (first >= b.length) throw new KeyBlobError(`${what} is zero`);
  return (b.length - first - 1) * 8 + (32 - Math.clz32(b[first]));
}

/** Reads one plain type's public fields; returns the key's bits. */
function readFields(r: Reader, plainType: string): number {
  const t = PLAIN_TYPES[plainType];
  let bits = 0;
  let mp = 0;
  for (const f of t.fields) {
    switch (f) {
      case 'mpint': {
        mp++;
        const b = mpintBits(r.bytes(`integer ${mp}`), `integer ${mp}`);
        // ssh-rsa: e then n (n gives the size); ssh-dss: p first
        if ((plainType.includes('rsa') && mp === 2) || (plainType.includes('dss') && mp === 1)) bits = b;
        break;
      }
      case 'ed25519': {
        if (r.bytes('the Ed25519 key').length !== 32) throw new KeyBlobError('the Ed25519 key is not 32 bytes');
        bits = 256;
        break;
      }
      case 'curve': {
        const c = r.text('the curve name');
        if (c !== t.curve?.name) throw new KeyBlobError(`the blob's curve ${c} does not match ${plainType}`);
        bits = t.curve.bits;
        break;
      }
      case 'point': {
        const q = r.bytes('the curve point');
        if (q.length !== t.curve?.pointLength || q[0] !== 0x04)
          throw new KeyBlobError(`the curve point is not an uncompressed ${t.curve?.name} point`);
        break;
      }
      case 'string': {
        const app = r.text('the security key application');
        if (app === '') throw new KeyBlobError('the security key application is empty');
        break;
      }
    }
  }
  return bits;
}

/**
 * Decodes a key line's base64 field, checks that it holds a key (or certificate) of `type` and
 * nothing else, and returns its facts. Throws KeyBlobError saying what is wrong.
 */
export function decodeKey(type: string, base64: string): DecodedKey {
  const certOf = CERT_TYPES[type];
  if (!(type in PLAIN_TYPES) && !certOf) throw new KeyBlobError(`unknown key type ${type}`);
  const blob = decodeBase64(base64);
  const r = new Reader(blob);
  const inner = r.text('the key type name');
  if (inner !== type) throw new KeyBlobError(`the blob holds a ${inner} key, not ${type}`);
  if (!certOf) {
    const bits = readFields(r, type);
    if (!r.done) throw new KeyBlobError('the key blob has trailing bytes');
    return { type, plainType: type, certificate: false, bits, fingerprint: md5ColonHex(blob) };
  }
  r.bytes('the certificate nonce');
  const start = r.offset;
  const bits = readFields(r, certOf);
  const fields = r.slice(start, r.offset);
  r.u64('the serial');
  const certType = r.u32('the certificate type');
  if (certType !== 1 && certType !== 2)
    throw new KeyBlobError(`certificate type ${certType} is neither user (1) nor host (2)`);
  r.bytes('the key id');
  r.bytes('the principals');
  r.u64('valid after');
  r.u64('valid before');
  r.bytes('the critical options');
  r.bytes('the extensions');
  r.bytes('the reserved field');
  if (r.bytes('the signature key').length === 0) throw new KeyBlobError('the certificate has no signature key');
  if (r.bytes('the signature').length === 0) throw new KeyBlobError('the certificate has no signature');
  if (!r.done) throw new KeyBlobError('the certificate blob has trailing bytes');
  // ssh-keygen fingerprints a certificate by its key: the plain blob (type name + key fields)
  const name = new TextEncoder().encode(certOf);
  const plain = new Uint8Array(4 + name.length + fields.length);
  new DataView(plain.buffer).setUint32(0, name.length);
  plain.set(name, 4);
  plain.set(fields, 4 + name.length);
  return { type, plainType: certOf, certificate: true, bits, fingerprint: md5ColonHex(plain) };
}
