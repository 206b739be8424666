import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  maskUrl,
  openUrl,
  resolveMaskedUrl,
  sealUrl,
  sealUrlSync,
  urlSecretParts,
} from '../../handlers/notification/url-secrets';
import { deliveryAgent, sendThrough } from '../../runtime/areas/notification/send';
import { notificationSettings } from '../../handlers/notification/contract';
import { SendError } from '../../runtime/areas/notification/send-error';
import { SecretBox } from '../../runtime/system/secret-box';
import { makeTestConfig } from '../helpers/host';

/**
 * Credentials inside a webhook URL (issue 27 item 11): which parts are secret, sealing and opening
 * them byte for byte, masks resolved by place, the sender opening them, and rows stored in clear
 * before this existed sealed at start.
 */

const dir = mkdtempSync(join(tmpdir(), 'ballast-urlsecrets-'));
const box = new SecretBox(join(dir, 'secret.key'));
const sealAll = async (values: string[]) => values.map((v) => box.seal(v));
const open = (s: string) => box.open(s);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the secret parts of a URL', () => {
  it('are the user, the password and every query value (a piece without = too), as they stand in the URL', () => {
    const url = 'https://us%40er:p%3Ass@h.example.test:8443/a/b?x=1&x=2&y=&k&z=a%20b#frag';
    expect(urlSecretParts(url)).toEqual([
      { raw: 'us%40er', place: { kind: 'username' } },
      { raw: 'p%3Ass', place: { kind: 'password' } },
      { raw: '1', place: { kind: 'query', key: 'x', index: 0 } },
      { raw: '2', place: { kind: 'query', key: 'x', index: 1 } },
      { raw: 'k', place: { kind: 'query', key: null, index: 0 } },
      { raw: 'a%20b', place: { kind: 'query', key: 'z', index: 0 } },
    ]);
    expect(maskUrl(url)).toBe(
      'https://********:********@h.example.test:8443/a/b?x=********&x=********&y=&********&z=********#frag',
    );
    // without credentials a URL stays as the client wrote it
    for (const plain of ['https://h.example.test/p', 'HTTPS://H.example.test/p?', 'https://h.example.test/?y='])
      expect(maskUrl(plain)).toBe(plain);
  });

  it('sealed where they stand and opened back to the same URL, byte for byte', async () => {
    // each secret holds a sequence a sealed part cannot (`%40`, `p%3A`, `%21`, `+`): sealed parts
    // are percent-encoded base64, which once held `t%2Bk` by chance
    const url = 'https://us%40er:p%3Ass@h.example.test/a?token=t%2Bk%21&t=x+y&k#f';
    const sealed = await sealUrl(url, sealAll);
    for (const s of ['us%40er', 'p%3Ass', 't%2Bk%21', 'x+y']) expect(sealed).not.toContain(s);
    expect(urlSecretParts(sealed).map((p) => decodeURIComponent(p.raw).slice(0, 7))).toEqual(Array(5).fill('enc:v1:'));
    expect(new URL(sealed).origin + new URL(sealed).pathname + new URL(sealed).hash).toBe('https://h.example.test/a#f');
    expect(openUrl(sealed, open)).toBe(url);
    // sealing twice changes nothing; the sync sealer (start-up) seals what is still in clear
    expect(await sealUrl(sealed, sealAll)).toBe(sealed);
    expect(sealUrlSync(sealed, (v) => box.seal(v))).toBe(sealed);
    expect(
      openUrl(
        sealUrlSync(url, (v) => box.seal(v)),
        open,
      ),
    ).toBe(url);
  });

  it('a mask takes the stored part at the same place; another origin or place is refused', async () => {
    const stored = await sealUrl('https://u:p@h.example.test/a?t=1&t=2&k', sealAll);
    const resolved = resolveMaskedUrl('https://********:new@h.example.test/b?t=9&t=********&********', stored);
    expect(openUrl(resolved, open)).toBe('https://u:new@h.example.test/b?t=9&t=2&k');
    const plain = 'https://other.example.test/?q=1';
    expect(resolveMaskedUrl(plain, stored)).toBe(plain);
    expect(() => resolveMaskedUrl('https://********@evil.example.test/a', stored)).toThrow(/origin changed/);
    expect(() => resolveMaskedUrl('http://********@h.example.test/a', stored)).toThrow(/origin changed/);
    expect(() => resolveMaskedUrl('https://h.example.test/a?t=1&t=2&t=********', stored)).toThrow(/no value/);
    expect(() => resolveMaskedUrl('https://u:********@h.example.test/a', undefined)).toThrow(/no stored URL/);
  });
});

describe('the sender', () => {
  it('opens the URL for the send; an error about it names no credential', async () => {
    const real = 'http://hook-us3r:hook-pa55@127.0.0.1:9/p?token=hook-t0ken';
    const json = JSON.stringify({ url: await sealUrl(real, sealAll) });
    const agent = deliveryAgent(7, 'webhook', json, open);
    expect(agent.type === 'webhook' && agent.config.url).toBe(real);
    // port 9 (discard) refuses: the reason names the origin only, and nothing secret is left
    const settings = notificationSettings.parse({ allowLocalTargets: true, timeoutMs: 2000 });
    const err = await sendThrough(agent, { id: 'e1' } as never, { settings, productName: 'Ballast' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SendError);
    expect((err as Error).message).toMatch(/^webhook http:\/\/127\.0\.0\.1:9 /);
    for (const s of ['hook-us3r', 'hook-pa55', 'hook-t0ken']) expect((err as Error).message).not.toContain(s);
    // a part sealed under another key cannot be opened: a permanent failure saying so
    const other = new SecretBox(join(dir, 'other.key'));
    const foreign = JSON.stringify({ url: sealUrlSync(real, (v) => other.seal(v)) });
    expect(() => deliveryAgent(8, 'webhook', foreign, open)).toThrow(/credentials in its stored url cannot be opened/);
  });

  it('a stored configuration the schema refuses names the fields, never a value', () => {
    const json = JSON.stringify({
      host: 'mail.example.test',
      to: 'ops@example.test',
      from: 'ballast@example.test',
      username: 'mail-us3r',
      password: 'mail-pa55word',
      port: 'smtp-p0rt',
      extra: 'extra-va1ue',
    });
    const err = (() => {
      try {
        deliveryAgent(9, 'smtp', json);
      } catch (e) {
        return e as SendError;
      }
    })();
    expect(err).toBeInstanceOf(SendError);
    expect(err?.permanent).toBe(true);
    expect(err?.message).toBe(
      'agent 9 has an invalid configuration: port: must be a port number 1-65535 (a number or a numeric string); (root): Unrecognized key: "extra"',
    );
    for (const s of ['mail-us3r', 'mail-pa55word', 'smtp-p0rt', 'extra-va1ue']) expect(err?.message).not.toContain(s);
  });
});

describe('rows stored before', () => {
  it('a webhook URL stored with credentials in clear is sealed at the next start', async () => {
    const { config, state } = makeTestConfig();
    const { createHost } = await import('../../runtime/host');
    const real = 'https://old-us3r:old-pa55@hooks.example.test/in?token=old-t0ken';
    const first = await createHost({ config, distDir: '/nonexistent', routes: [], log: () => undefined });
    first.db
      .prepare(
        "INSERT INTO notification_agents (type, enabled, json, unix_time, created_at, updated_at) VALUES ('webhook', 1, ?, 0, '', '')",
      )
      .run(JSON.stringify({ url: real }));
    await first.close();
    const second = await createHost({ config, distDir: '/nonexistent', routes: [], log: () => undefined });
    try {
      const row = second.db.prepare('SELECT json FROM notification_agents').get() as { json: string };
      for (const s of ['old-us3r', 'old-pa55', 'old-t0ken']) expect(row.json).not.toContain(s);
      const url = (JSON.parse(row.json) as { url: string }).url;
      expect(openUrl(url, (v) => new SecretBox(join(state, 'secret.key')).open(v))).toBe(real);
    } finally {
      await second.close();
    }
  });
});
