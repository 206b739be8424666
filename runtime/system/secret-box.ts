/**
 * Secrets at rest: values the product must keep (notification passwords, tokens, webhook secrets)
 * are stored sealed with AES-256-GCM under a key kept outside the database, in
 * `stateDir/secret.key` (32 random bytes, 0600, created at first start). A copy of the database
 * alone does not reveal them; back up the key file with it (README: backups).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const PREFIX = 'enc:v1:';

export class SecretBox {
  private readonly key: Buffer;

  constructor(readonly keyFile: string) {
    if (!existsSync(keyFile)) writeFileSync(keyFile, randomBytes(32), { mode: 0o600, flag: 'wx' });
    if ((statSync(keyFile).mode & 0o077) !== 0) chmodSync(keyFile, 0o600);
    this.key = readFileSync(keyFile);
    if (this.key.length !== 32)
      throw new Error(`${keyFile} is not a 32-byte key (remove it only if no sealed secrets exist)`);
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return PREFIX + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
  }

  /** The plain value; a value stored before sealing existed is returned as it is. */
  open(value: string): string {
    if (!SecretBox.isSealed(value)) return value;
    const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}
