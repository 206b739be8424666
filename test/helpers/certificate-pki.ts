/**
 * Certificates for the certificate area's tests, generated with the real `openssl` (Debian package
 * `openssl`) in a private directory: root → intermediate → server chains, a mismatched key, an
 * expired server certificate, an RSA 1024 one, a non-CA leaf.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const OPENSSL = '/usr/bin/openssl';

export function requireOpenssl(): void {
  if (!existsSync(OPENSSL))
    throw new Error(`${OPENSSL} is missing: install the Debian package openssl (apt-get install -y openssl)`);
}

export interface Chain {
  root: string;
  intermediate: string;
  server: string;
  private_key: string;
}

export interface Pki {
  /** root → intermediate → server (ECDSA P-256), SAN DNS:<cn>, IP:127.0.0.1 */
  a: Chain;
  /** a second, independent chain */
  b: Chain;
  /** a key that belongs to no certificate */
  otherKey: string;
  /** server certificate of chain a's key, signed by a's intermediate, valid 2020-2021 */
  expiredServer: string;
  /** RSA 1024 server certificate and key signed by a's intermediate */
  rsa1024Server: string;
  rsa1024Key: string;
  /** a self-signed non-CA certificate */
  leaf: string;
}

function run(dir: string, args: string[], input?: string): string {
  return execFileSync(OPENSSL, args, { cwd: dir, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

const CA_CNF = `[ca]
default_ca = d
[d]
database = index.txt
new_certs_dir = .
serial = serial
default_md = sha256
policy = p
unique_subject = no
copy_extensions = copy
[p]
commonName = supplied
`;

export function makePki(dir: string, cn = 'localhost'): Pki {
  requireOpenssl();
  mkdirSync(dir, { recursive: true });
  const file = (n: string) => readFileSync(join(dir, n), 'utf8');
  const ecKey = (n: string) =>
    run(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', n]);
  const rootCa = (n: string, subj: string) => {
    ecKey(`${n}.key`);
    run(dir, [
      'req',
      '-new',
      '-x509',
      '-key',
      `${n}.key`,
      '-sha256',
      '-days',
      '3650',
      '-subj',
      subj,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      `${n}.crt`,
    ]);
  };
  const signed = (n: string, issuer: string, subj: string, ext: string, keyArgs?: string[]) => {
    if (keyArgs) run(dir, ['genpkey', ...keyArgs, '-out', `${n}.key`]);
    else ecKey(`${n}.key`);
    run(dir, ['req', '-new', '-key', `${n}.key`, '-subj', subj, '-out', `${n}.csr`]);
    writeFileSync(join(dir, `${n}.ext`), ext);
    run(dir, [
      'x509',
      '-req',
      '-in',
      `${n}.csr`,
      '-CA',
      `${issuer}.crt`,
      '-CAkey',
      `${issuer}.key`,
      '-CAcreateserial',
      '-days',
      '400',
      '-sha256',
      '-extfile',
      `${n}.ext`,
      '-out',
      `${n}.crt`,
    ]);
  };
  const caExt = 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n';
  const leafExt = `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${cn},IP:127.0.0.1\n`;
  const chain = (p: string): Chain => {
    rootCa(`${p}-root`, `/O=Certificate Test/CN=Test Root ${p}`);
    signed(`${p}-int`, `${p}-root`, `/O=Certificate Test/CN=Test Intermediate ${p}`, caExt);
    signed(`${p}-srv`, `${p}-int`, `/CN=${cn}`, leafExt);
    return {
      root: file(`${p}-root.crt`),
      intermediate: file(`${p}-int.crt`),
      server: file(`${p}-srv.crt`),
      private_key: file(`${p}-srv.key`),
    };
  };
  const a = chain('a');
  const b = chain('b');
  ecKey('other.key');
  // expired: openssl ca takes explicit start and end dates
  writeFileSync(join(dir, 'ca.cnf'), CA_CNF);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '01\n');
  run(dir, ['req', '-new', '-key', 'a-srv.key', '-subj', `/CN=${cn}`, '-out', 'old.csr']);
  run(dir, [
    'ca',
    '-batch',
    '-config',
    'ca.cnf',
    '-cert',
    'a-int.crt',
    '-keyfile',
    'a-int.key',
    '-in',
    'old.csr',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20210101000000Z',
    '-notext',
    '-out',
    'old.crt',
  ]);
  signed('rsa1024', 'a-int', `/CN=${cn}`, leafExt, ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:1024']);
  ecKey('leaf.key');
  run(dir, [
    'req',
    '-new',
    '-x509',
    '-key',
    'leaf.key',
    '-sha256',
    '-days',
    '30',
    '-subj',
    '/CN=just-a-leaf',
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-out',
    'leaf.crt',
  ]);
  return {
    a,
    b,
    otherKey: file('other.key'),
    expiredServer: file('old.crt'),
    rsa1024Server: file('rsa1024.crt'),
    rsa1024Key: file('rsa1024.key'),
    leaf: file('leaf.crt'),
  };
}
