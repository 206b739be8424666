import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import agentCreate from '../../handlers/notification/routes/agent-create';
import agentTest from '../../handlers/notification/routes/agent-test';
import { sendThrough } from '../../runtime/areas/notification/send';
import { notificationSettings } from '../../handlers/notification/contract';
import { makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

/**
 * settings.notification.sinkFile (the demo's notification destination): what would be sent is
 * appended to the file as one JSON line and counts as delivered; nothing connects anywhere and
 * the agent's configuration, secrets included, never reaches the file.
 */
const WHSEC = `whsec_${Buffer.from('s'.repeat(32)).toString('base64')}`;

let t: TestHost;
let sink: string;
beforeAll(async () => {
  sink = join(privateDir('ballast-sink'), 'notifications.jsonl');
  t = await makeTestHost({
    routes: [agentCreate, agentTest],
    config: { settings: { notification: { sinkFile: sink } } },
  });
});
afterAll(() => t.close());

const lines = () =>
  existsSync(sink)
    ? readFileSync(sink, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe('notification sink file', () => {
  it('the test route answers [{id}] with the message in the sink, never the secret or the URL', async () => {
    // a destination that would never answer: the sink is used instead of the network
    const created = await t.call<{ id: number }[]>('POST', '/api/v2/notification/agent/create', {
      body: { type: 'webhook', enabled: false, json: { url: 'https://hooks.example.invalid/tok3n', secret: WHSEC } },
    });
    expect(created.status).toBe(200);
    const id = created.json[0].id;
    const r = await t.call('GET', `/api/v2/notification/agent/${id}/test`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual([{ id }]);
    const got = lines();
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      agentId: id,
      type: 'webhook',
      notification: { type: 'notification.agent.tested', host: 'test-host', data: { agentId: id } },
    });
    const text = readFileSync(sink, 'utf8');
    expect(text).not.toContain(WHSEC.slice('whsec_'.length));
    expect(text).not.toContain('tok3n');
  });

  it('deliveries append in order; an unwritable sink is a send error naming the file', async () => {
    const dir = privateDir('ballast-sink2');
    const file = join(dir, 'n.jsonl');
    const settings = notificationSettings.parse({ sinkFile: file });
    const agent = {
      id: 7,
      type: 'sms' as const,
      config: { accountSid: 'AC', authToken: 'tw-s3cret', fromPhoneNumber: '+1', toPhoneNumber: '+2' },
    };
    const n = (seq: number) => ({
      id: `e${seq}`,
      sequence: seq,
      type: 's3.share.created',
      timestamp: 't',
      host: 'h',
      data: { seq },
    });
    await sendThrough(agent, n(1), { settings, productName: 'Ballast' });
    await sendThrough(agent, n(2), { settings, productName: 'Ballast' });
    const got = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { notification: { sequence: number } });
    expect(got.map((g) => g.notification.sequence)).toEqual([1, 2]);
    expect(readFileSync(file, 'utf8')).not.toContain('tw-s3cret');

    const bad = notificationSettings.parse({ sinkFile: join(dir, 'missing', 'n.jsonl') });
    await expect(sendThrough(agent, n(3), { settings: bad, productName: 'Ballast' })).rejects.toThrow(
      `the notification sink ${join(dir, 'missing', 'n.jsonl')} cannot be written: ENOENT`,
    );
  });

  it('a relative sink path is refused at start', () => {
    const r = notificationSettings.safeParse({ sinkFile: 'notifications.jsonl' });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['sinkFile', 'must be an absolute path'],
    ]);
  });
});
