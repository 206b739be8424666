/**
 * The pure MD5 behind key fingerprints: RFC 1321's test suite, then node:crypto on every length
 * 0-300 (all padding cases, one and several blocks) and on random inputs up to 20 KB.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { md5, md5ColonHex } from '../../../handlers/keys/parse/md5';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ascii = (s: string) => new TextEncoder().encode(s);

describe('md5', () => {
  it('gives the RFC 1321 test suite values', () => {
    const suite: [string, string][] = [
      ['', 'd41d8cd98f00b204e9800998ecf8427e'],
      ['a', '0cc175b9c0f1b6a831c399e269772661'],
      ['abc', '900150983cd24fb0d6963f7d28e17f72'],
      ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
      ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
      ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'd174ab98d277d9f5a5611c2c9f419d9f'],
      [
        '12345678901234567890123456789012345678901234567890123456789012345678901234567890',
        '57edf4a22be3c955ac49da2e2107b67a',
      ],
    ];
    for (const [input, digest] of suite) expect(hex(md5(ascii(input)))).toBe(digest);
  });

  it('agrees with node:crypto on every length from 0 to 300 bytes', () => {
    for (let n = 0; n <= 300; n++) {
      const data = randomBytes(n);
      expect(hex(md5(data)), `length ${n}`).toBe(createHash('md5').update(data).digest('hex'));
    }
  });

  it('agrees with node:crypto on random inputs up to 20 KB, and on subarrays at an offset', () => {
    for (let i = 0; i < 50; i++) {
      const data = randomBytes(1 + Math.floor(Math.random() * 20_000));
      expect(hex(md5(data))).toBe(createHash('md5').update(data).digest('hex'));
      const view = data.subarray(3, data.length - 1);
      expect(hex(md5(view))).toBe(createHash('md5').update(view).digest('hex'));
    }
  });

  it('formats as colon-separated lower-case pairs', () => {
    expect(md5ColonHex(ascii('abc'))).toBe('90:01:50:98:3c:d2:4f:b0:d6:96:3f:7d:28:e1:7f:72');
  });
});
