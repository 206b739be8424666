/** The host's PEM block locator (runtime/areas/certificate/x509.ts): content is decoded by node:crypto only. */
import { describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { pemBlocks, inspectPem } from '../../../runtime/areas/certificate/x509';
import { DEMO_LAB_CA, DEMO_NEW_CHAIN } from '../../../handlers/certificate/examples';

describe('pemBlocks', () => {
  it('finds blocks in order, with CRLF, indentation and text around them', () => {
    const text = `Bag Attributes\n${DEMO_NEW_CHAIN.server}subject=...\r\n  ${DEMO_NEW_CHAIN.private_key.replace(/\n/g, '\r\n')}\n${DEMO_NEW_CHAIN.intermediate}`;
    const blocks = pemBlocks(text);
    expect(blocks.map((b) => b.label)).toEqual(['CERTIFICATE', 'PRIVATE KEY', 'CERTIFICATE']);
    expect(blocks[0].text).toBe(DEMO_NEW_CHAIN.server);
    expect(blocks[1].text).toBe(DEMO_NEW_CHAIN.private_key);
    expect(new X509Certificate(blocks[2].text).fingerprint256).toBe(
      new X509Certificate(DEMO_NEW_CHAIN.intermediate).fingerprint256,
    );
  });

  it('drops unterminated and mismatched blocks', () => {
    expect(pemBlocks('-----BEGIN CERTIFICATE-----\nAAAA\n')).toEqual([]);
    expect(pemBlocks('-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----\n')).toEqual([]);
    expect(pemBlocks(`-----BEGIN CERTIFICATE-----\nAAAA\n${DEMO_LAB_CA}`).map((b) => b.text)).toEqual([DEMO_LAB_CA]);
  });

  it('stays linear on hostile input (a megabyte of BEGIN lines; quadratic would run past the test timeout)', () => {
    expect(pemBlocks('-----BEGIN CERTIFICATE-----\n'.repeat(36_000))).toEqual([]);
  });

  it('inspectPem reports each certificate, other blocks, and re-encodes', () => {
    const r = inspectPem(`junk\n${DEMO_LAB_CA}${DEMO_NEW_CHAIN.private_key}`);
    expect(r.otherBlocks).toEqual(['PRIVATE KEY']);
    expect(r.normalized).toBe(new X509Certificate(DEMO_LAB_CA).toString());
    expect(r.certificates).toEqual([
      expect.objectContaining({
        subject: 'O=Example Lab, CN=Example Lab CA',
        ca: true,
        selfSigned: true,
        keyType: 'ec',
        curve: 'prime256v1',
      }),
    ]);
    expect(JSON.stringify(r)).not.toContain('PRIVATE KEY-----');
    expect(inspectPem('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n').error).toMatch(
      /^block 1 is not a valid certificate/,
    );
  });
});
