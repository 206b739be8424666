import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { signWebhook } from '../../runtime/areas/notification/signature';
import { notificationSettings, TEST_OP } from '../../handlers/notification/contract';
import { notificationOps } from '../../runtime/areas/notification/ops';
import notificationArea from '../../runtime/areas/notification';
import { backoffMs } from '../../runtime/areas/notification/backoff';
import { areaSettings } from '../../runtime/host';
import { redact } from '../../runtime/areas/notification/redact';
import { mailTextOf, smsTextOf, subjectOf, titleOf, type Notification } from '../../runtime/areas/notification/payload';
import { migrate } from '../../runtime/db/database';
import { migrations } from '../../runtime/db/migrations';
import { verifyStandardWebhook } from '../helpers/notification-peers';

/** The delivery pieces that need no peer: signing, backoff, redaction, rendering, migration 2. */

describe('Standard Webhooks signature', () => {
  // The specification's published test vector.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const ts = 1614265330;
  const body = '{"test": 2432232314}';

  it('reproduces the reference signature', () => {
    expect(signWebhook(secret, id, ts, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it("the test receiver's verifier accepts it and refuses a changed body, a stale timestamp or another key", () => {
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1a,xyz v1,${signWebhook(secret, id, ts, body).slice(3)}`,
    };
    expect(verifyStandardWebhook(secret, headers, body, ts + 10)).toBe(true);
    expect(verifyStandardWebhook(secret, headers, body.replace('2', '3'), ts)).toBe(false);
    expect(verifyStandardWebhook(secret, headers, body, ts + 301)).toBe(false);
    expect(
      verifyStandardWebhook(`whsec_${Buffer.from('another key of 24 bytes!').toString('base64')}`, headers, body, ts),
    ).toBe(false);
  });
});

describe('backoff', () => {
  const defaults = notificationSettings.parse({});
  const mid = () => 0.5; // no jitter

  it('doubles from 10 s up to 6 h; the default 15 attempts span about 23.4 h', () => {
    const delays = Array.from(
      { length: defaults.maxAttempts - 1 },
      (_, i) => backoffMs(defaults, i + 1, undefined, mid) / 1000,
    );
    expect(delays).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 21600, 21600]);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(84150);
  });

  it('jitters by ±20 %, honours Retry-After, and never waits past the cap', () => {
    expect(backoffMs(defaults, 1, undefined, () => 0)).toBe(8000);
    expect(backoffMs(defaults, 1, undefined, () => 1)).toBe(12000);
    expect(backoffMs(defaults, 1, 60_000, mid)).toBe(60_000);
    expect(backoffMs(defaults, 1, 48 * 3600_000, mid)).toBe(6 * 3600_000);
    expect(backoffMs(defaults, 14, undefined, () => 1)).toBe(6 * 3600_000);
  });

  it('settings.notification is checked at start, naming the key', () => {
    expect(() => areaSettings(notificationArea, { notification: { maxAttempt: 3 } })).toThrow(
      'config: settings.notification: Unrecognized key: "maxAttempt"',
    );
    expect(() => areaSettings(notificationArea, { notification: { backoffBaseMs: -1 } })).toThrow(
      /settings\.notification\.backoffBaseMs/,
    );
    expect(notificationSettings.parse({ twilioBaseUrl: 'http://127.0.0.1:9' }).twilioBaseUrl).toBe(
      'http://127.0.0.1:9',
    );
  });
});

describe('redact', () => {
  it('removes a secret and the base64 forms SMTP and HTTP Basic would carry', () => {
    const plain = Buffer.from('\0ballast\0hunter22').toString('base64');
    const basic = Buffer.from('AC1:hunter22').toString('base64');
    expect(redact(`535 bad hunter22 (${plain}) [${basic}]`, ['hunter22'], ['ballast', 'AC1'])).toBe(
      '535 bad *** (***) [***]',
    );
    expect(redact('nothing here', ['abc'])).toBe('nothing here');
  });
});

describe('rendering', () => {
  const n: Notification = {
    id: 'e1',
    type: 'certificate.tls.rolled_back',
    timestamp: '2026-01-02T03:04:05.000Z',
    host: 'h1',
    data: { reason: 'no commit', nested: { a: 1 } },
  };

  it('turns the kind into a title, a subject and a text', () => {
    expect(titleOf('s3.share.created')).toBe('S3 share created');
    expect(titleOf('dfs.lnet.config_imported')).toBe('DFS LNET config imported');
    expect(titleOf('pod.pod.paused')).toBe('Pod paused');
    expect(subjectOf(n, 'Ballast')).toBe('[Ballast h1] Certificate TLS rolled back');
    expect(mailTextOf(n, 'Ballast')).toBe(
      [
        'Certificate TLS rolled back on h1.',
        '',
        'Event: certificate.tls.rolled_back',
        'Time:  2026-01-02T03:04:05.000Z',
        'Host:  h1',
        'Id:    e1',
        '',
        'Data:',
        '{\n  "reason": "no commit",\n  "nested": {\n    "a": 1\n  }\n}',
        '',
        '-- Ballast notifications',
        '',
      ].join('\n'),
    );
  });

  it('SMS: one line of the scalar fields, at most 320 characters', () => {
    expect(smsTextOf(n, 'Ballast')).toBe(
      'Ballast h1: Certificate TLS rolled back (certificate.tls.rolled_back) reason=no commit at 2026-01-02T03:04:05.000Z',
    );
    const long = smsTextOf({ ...n, data: { text: 'x'.repeat(1000) } }, 'Ballast');
    expect(long).toHaveLength(320);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('migration 2', () => {
  it('keeps the outbox rows of a version-1 database and allows the cancelled state', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    db.exec(migrations[0].sql);
    db.prepare('INSERT INTO schema_migrations VALUES (1, ?, 0)').run(migrations[0].name);
    db.prepare("INSERT INTO events (id, seq, kind, at, data) VALUES ('e1', 1, 'a.b', 5, '{}')").run();
    db.prepare(
      "INSERT INTO deliveries (event_id, agent_id, state, attempts, next_attempt_at, last_error) VALUES ('e1', 7, 'pending', 2, 9, 'HTTP 500')",
    ).run();
    migrate(db);
    expect(db.prepare('SELECT * FROM deliveries').all()).toEqual([
      {
        event_id: 'e1',
        agent_id: 7,
        state: 'pending',
        attempts: 2,
        next_attempt_at: 9,
        last_attempt_at: null,
        last_error: 'HTTP 500',
        delivered_at: null,
      },
    ]);
    db.prepare("UPDATE deliveries SET state = 'cancelled'").run();
    expect(() => db.prepare("UPDATE deliveries SET state = 'lost'").run()).toThrow(/CHECK constraint/);
    db.prepare("DELETE FROM events WHERE id = 'e1'").run();
    expect(db.prepare('SELECT COUNT(*) AS n FROM deliveries').get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('the test op', () => {
  it('checks its payload with the contract schema before it reads the agent', async () => {
    const db = new Database(':memory:');
    migrate(db);
    const ops = notificationOps({
      db,
      settings: notificationSettings.parse({}),
      hostId: 'h1',
      productName: 'Ballast',
    });
    for (const payload of [{}, { id: '1' }, { id: 1.5 }, { id: 1, more: true }])
      await expect(ops[TEST_OP](payload, 'r1'), JSON.stringify(payload)).rejects.toMatchObject({
        name: 'SystemRefusal',
        code: 'bad_request',
        message: expect.stringMatching(/^notification\/test: payload(\.id)?: /),
      });
    await expect(ops[TEST_OP]({ id: 1 }, 'r1')).rejects.toMatchObject({ code: 'not_found' });
    db.close();
  });
});
