import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import agentList from '../../handlers/notification/routes/agent-list';
import agentDetails from '../../handlers/notification/routes/agent-details';
import agentCreate from '../../handlers/notification/routes/agent-create';
import agentUpdate from '../../handlers/notification/routes/agent-update';
import agentDestroy from '../../handlers/notification/routes/agent-destroy';
import agentTest from '../../handlers/notification/routes/agent-test';
import eventList from '../../handlers/notification/routes/event-list';
import { makeTestHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';
import type * as z from 'zod';
import { SecretBox } from '../../runtime/system/secret-box';
import { openUrl } from '../../handlers/notification/url-secrets';
import type { Agent, event } from '../../handlers/notification/responses';

/** GET /notification/events answers an array of these (event-list's response schema) */
type NotificationEvent = z.infer<typeof event>;

/**
 * The notification routes with a real SQLite DB: spec shapes, per-type validation, write-only
 * secrets, the events every change emits and the outbox rows they create. Delivery to real peers
 * is the system tier's (test/system/notification-*.test.ts).
 */

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const SMS = {
  accountSid: SID,
  authToken: 'tw-token-s3cret',
  fromPhoneNumber: '+15005550006',
  toPhoneNumber: '+15551234567',
};
const SMTP = {
  host: 'mail.example.test',
  to: ['ops@example.test', 'Oncall <oncall@example.test>'],
  from: 'ballast@example.test',
  username: 'ballast',
  password: 'smtp-pa55word',
  port: '587',
  requireTLS: true,
};
const WHSEC = `whsec_${Buffer.from('k'.repeat(32)).toString('base64')}`;
const SECRETS = [SMS.authToken, SMTP.password, WHSEC];

let t: TestHost;
beforeAll(async () => {
  // the test receivers listen on loopback
  t = await makeTestHost({
    routes: [agentList, agentDetails, agentCreate, agentUpdate, agentDestroy, agentTest, eventList],
    config: { settings: { notification: { allowLocalTargets: true } } },
  });
});
afterAll(() => t.close());

const A = '/api/v2/notification/agent';
const create = (body: unknown, token?: string) => t.call<Agent[]>('POST', `${A}/create`, { body, token });
const rawRow = (id: number) =>
  t.host.db.prepare('SELECT type, enabled, json FROM notification_agents WHERE id = ?').get(id) as
    { type: string; enabled: number; json: string } | undefined;
/** A stored agent with its sealed secrets opened with the host's key (stateDir/secret.key). */
const stored = (id: number) => {
  const row = rawRow(id);
  if (!row) return undefined;
  const box = new SecretBox(join(t.config.stateDir, 'secret.key'));
  const json = JSON.parse(row.json) as Record<string, unknown>;
  for (const f of ['authToken', 'password', 'secret'])
    if (typeof json[f] === 'string') json[f] = box.open(json[f] as string);
  if (typeof json.url === 'string') json.url = openUrl(json.url, (v) => box.open(v));
  return { ...row, json: JSON.stringify(json) };
};
const eventsOfKind = (kind: string) =>
  (
    t.host.db.prepare('SELECT id, kind, data, request_id FROM events WHERE kind = ? ORDER BY seq').all(kind) as {
      id: string;
      data: string;
      request_id: string;
    }[]
  ).map((e) => ({ ...e, data: JSON.parse(e.data) }));
const deliveriesOf = (eventId: string) =>
  t.host.db
    .prepare('SELECT agent_id, state, attempts FROM deliveries WHERE event_id = ? ORDER BY agent_id')
    .all(eventId);
const paths = (r: { json: unknown }) => (errorOf(r).issues ?? []).map((i) => `${i.path}: ${i.message}`);

describe('create, details, list', () => {
  it('creates each type and answers the spec agent, secrets masked; the DB keeps them', async () => {
    const before = Date.now();
    const sms = await create({ type: 'sms', enabled: true, json: SMS });
    expect(sms.status).toBe(200);
    expect(sms.json).toHaveLength(1);
    const a = sms.json[0];
    expect(a).toEqual({
      id: expect.any(Number),
      hostid: 'test-host',
      type: 'sms',
      enabled: true,
      json: { ...SMS, authToken: '********' },
      unix_time: expect.stringMatching(/^\d+$/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: a.createdAt,
    });
    expect(Number(a.unix_time)).toBeGreaterThanOrEqual(before);
    expect(new Date(a.createdAt).getTime()).toBe(Number(a.unix_time));
    expect(JSON.parse(stored(a.id)!.json).authToken).toBe(SMS.authToken);
    // at rest the secret is sealed with the host's key: the database alone does not reveal it
    expect(JSON.parse(rawRow(a.id)!.json).authToken).toMatch(/^enc:v1:[A-Za-z0-9+/]+=*$/);
    expect(rawRow(a.id)!.json).not.toContain(SMS.authToken);

    const smtp = await create({ type: 'smtp', enabled: false, json: SMTP });
    expect(smtp.status).toBe(200);
    expect(smtp.json[0]).toMatchObject({ type: 'smtp', enabled: false, json: { ...SMTP, password: '********' } });
    const hook = await create({
      type: 'webhook',
      enabled: true,
      json: { url: 'https://hooks.example.test/ballast', secret: WHSEC },
    });
    expect(hook.json[0].json).toEqual({ url: 'https://hooks.example.test/ballast', secret: '********' });
    const plain = await create({ type: 'webhook', enabled: true, json: { url: 'http://127.0.0.1:9/x' } });
    expect(plain.json[0].json).toEqual({ url: 'http://127.0.0.1:9/x' });

    const list = await t.call<Agent[]>('GET', A);
    expect(list.status).toBe(200);
    expect(list.json.map((x: { id: number; type: string }) => [x.id, x.type])).toEqual([
      [a.id, 'sms'],
      [smtp.json[0].id, 'smtp'],
      [hook.json[0].id, 'webhook'],
      [plain.json[0].id, 'webhook'],
    ]);
    const details = await t.call<Agent[]>('GET', `${A}/${a.id}/details`);
    expect(details.status).toBe(200);
    expect(details.json).toEqual([a]);
    for (const s of SECRETS) expect(list.text + details.text).not.toContain(s);
  });

  it('smtp accepts a port number or a numeric string, one recipient or a list, and the listed ssl flag', async () => {
    for (const json of [
      { ...SMTP, port: 465, secure: true, ssl: true, to: 'ops@example.test' },
      { ...SMTP, to: 'a@example.test, b@example.test' },
    ]) {
      const r = await create({ type: 'smtp', enabled: false, json });
      expect(r.status, r.text).toBe(200);
      expect(r.json[0].json).toEqual({ ...json, password: '********' });
    }
  });

  it('400 names every missing or wrong field of the type', async () => {
    const r = await create({
      type: 'sms',
      enabled: true,
      json: { accountSid: 'nope', fromPhoneNumber: '+15005550006' },
    });
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('validation_failed');
    expect(paths(r).sort()).toEqual([
      'body.json.accountSid: must be a Twilio account SID: AC followed by 32 hex digits',
      'body.json.authToken: required',
      'body.json.toPhoneNumber: required',
    ]);

    const s = await create({
      type: 'smtp',
      enabled: true,
      json: { ...SMTP, port: 'abc', to: ['not-an-address'], tls: true, password: undefined },
    });
    expect(paths(s).sort()).toEqual([
      'body.json.password: required',
      'body.json.port: must be a port number 1-65535 (a number or a numeric string)',
      'body.json.to.0: must be an e-mail address (a@b.example or "Name <a@b.example>")',
      'body.json: Unrecognized key: "tls"',
    ]);

    const w = await create({ type: 'webhook', enabled: 'yes', json: { url: 'ftp://x', secret: 'whsec_short' } });
    expect(paths(w).sort()).toEqual([
      'body.enabled: must be a boolean',
      'body.json.secret: must be whsec_ followed by the base64 of 24 to 64 bytes',
      'body.json.url: must be an absolute http:// or https:// URL',
    ]);

    expect(paths(await create({ type: 'pager', enabled: true, json: {} }))).toEqual([
      'body.type: type must be sms, smtp or webhook',
    ]);
    expect(paths(await create({ type: 'sms', enabled: true, json: { ...SMS, authToken: '********' } }))).toEqual([
      'body.json.authToken: is the mask ********, not a value: send the real secret, or omit it on update to keep the stored one',
    ]);
  });
});

describe('update', () => {
  let id: number;
  beforeAll(async () => {
    id = (await create({ type: 'smtp', enabled: true, json: SMTP })).json[0].id;
  });

  it('changes enabled alone; the configuration and its secret stay', async () => {
    const r = await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { enabled: false } });
    expect(r.status).toBe(200);
    expect(r.json[0]).toMatchObject({ id, enabled: false, json: { ...SMTP, password: '********' } });
    expect(stored(id)).toEqual({ type: 'smtp', enabled: 0, json: JSON.stringify(SMTP) });
  });

  it('a new json that omits the password, or sends the mask back, keeps the stored one', async () => {
    const { password: _, ...noPassword } = SMTP;
    const r = await t.call<Agent[]>('POST', `${A}/${id}/update`, {
      body: { json: { ...noPassword, to: 'new@example.test' } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json[0].json).toEqual({ ...noPassword, to: 'new@example.test', password: '********' });
    expect(JSON.parse(stored(id)!.json)).toEqual({ ...SMTP, to: 'new@example.test' });

    const back = await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { json: r.json[0].json } });
    expect(back.status).toBe(200);
    expect(JSON.parse(stored(id)!.json).password).toBe(SMTP.password);

    await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { json: { ...SMTP, password: 'rotated-pw' } } });
    expect(JSON.parse(stored(id)!.json).password).toBe('rotated-pw');
  });

  it('json is checked against the resulting type; a type change needs a json', async () => {
    const noJson = await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { type: 'webhook' } });
    expect(noJson.status).toBe(400);
    expect(paths(noJson)).toEqual(['body.json: required when type changes']);

    const wrong = await t.call<Agent[]>('POST', `${A}/${id}/update`, {
      body: { type: 'sms', json: { ...SMS, authToken: undefined } },
    });
    expect(paths(wrong)).toEqual(['body.json.authToken: required']);

    // same type: merged into the stored json, so only what is given is checked (issue 12 item 16)
    const bad = await t.call<Agent[]>('POST', `${A}/${id}/update`, {
      body: { json: { port: 'abc', to: ['not-an-address'] } },
    });
    expect(bad.status).toBe(400);
    expect(
      paths(bad)
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['body.json.port', 'body.json.to.0']);

    const ok = await t.call<Agent[]>('POST', `${A}/${id}/update`, {
      body: { type: 'webhook', enabled: true, json: { url: 'https://x.example.test/h' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.json[0]).toMatchObject({ id, type: 'webhook', enabled: true, json: { url: 'https://x.example.test/h' } });
    expect(stored(id)).toEqual({ type: 'webhook', enabled: 1, json: '{"url":"https://x.example.test/h"}' });
  });

  it('unknown keys and unknown ids are refused', async () => {
    expect(paths(await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { enabled: true, name: 'x' } }))).toEqual([
      'body: Unrecognized key: "name"',
    ]);
    const missing = await t.call('POST', `${A}/99999/update`, { body: { enabled: true } });
    expect(missing.status).toBe(404);
    expect(errorOf(missing)).toMatchObject({ code: 'not_found', message: 'no notification agent with id 99999' });
    expect(paths(await t.call('POST', `${A}/abc/update`, { body: { enabled: true } }))).toEqual([
      'params.id: must be a positive integer',
    ]);
  });
});

describe('update: every field optional, partial json merged (issue 12 item 16)', () => {
  let id: number;
  const agentOf = (r: { json: unknown }) =>
    (r.json as { id: number; type: string; enabled: boolean; json: Record<string, unknown> }[])[0];
  const updates = () =>
    (
      t.host.db.prepare("SELECT COUNT(*) AS n FROM events WHERE kind = 'notification.agent.updated'").get() as {
        n: number;
      }
    ).n;
  beforeAll(async () => {
    id = (await create({ type: 'smtp', enabled: true, json: SMTP })).json[0].id;
  });

  it('{} is a 200 that changes nothing and emits nothing', async () => {
    const before = updates();
    const r = await t.call('POST', `${A}/${id}/update`, { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(agentOf(r)).toMatchObject({ id, type: 'smtp', enabled: true, json: { ...SMTP, password: '********' } });
    expect(stored(id)).toEqual({ type: 'smtp', enabled: 1, json: JSON.stringify(SMTP) });
    expect(updates()).toBe(before);
  });

  it("an id equal to the URL's is accepted (an agent object sent back); another id is a 400", async () => {
    const details = agentOf(await t.call('POST', `${A}/${id}/update`, { body: { id } }));
    const back = await t.call('POST', `${A}/${id}/update`, {
      body: { id: details.id, type: details.type, enabled: false, json: details.json },
    });
    expect(back.status, back.text).toBe(200);
    expect(stored(id)).toEqual({ type: 'smtp', enabled: 0, json: JSON.stringify(SMTP) });
    expect((await t.call('POST', `${A}/${id}/update`, { body: { id: String(id), enabled: true } })).status).toBe(200);
    const other = await t.call('POST', `${A}/${id}/update`, { body: { id: id + 1, enabled: true } });
    expect(other.status).toBe(400);
    expect(paths(other)).toEqual([`body.id: must equal the id in the URL (${id})`]);
  });

  it('a json with some fields is merged into the stored one when the type is unchanged; the secret stays', async () => {
    const r = await t.call('POST', `${A}/${id}/update`, { body: { json: { to: 'ops@example.test' } } });
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(stored(id)!.json)).toEqual({ ...SMTP, to: 'ops@example.test' });
    expect(agentOf(r).json).toEqual({ ...SMTP, to: 'ops@example.test', password: '********' });
    expect(paths(await t.call('POST', `${A}/${id}/update`, { body: { json: { tls: true } } }))).toEqual([
      'body.json: Unrecognized key: "tls"',
    ]);
    expect(JSON.parse(stored(id)!.json)).toEqual({ ...SMTP, to: 'ops@example.test' });
  });
});

describe('destroy', () => {
  it('answers [id], removes the agent, and a second destroy is 404', async () => {
    const id = (await create({ type: 'webhook', enabled: true, json: { url: 'https://gone.example.test/' } })).json[0]
      .id;
    const r = await t.call('POST', `${A}/${id}/destroy`, { body: {} });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([id]);
    expect(stored(id)).toBeUndefined();
    expect((await t.call('GET', `${A}/${id}/details`)).status).toBe(404);
    expect((await t.call('POST', `${A}/${id}/destroy`, { body: {} })).status).toBe(404);
  });
});

describe('events and the outbox', () => {
  it('create/update/destroy emit events with no secret; only enabled agents get deliveries', async () => {
    for (const a of (await t.call<Agent[]>('GET', A)).json) await t.call('POST', `${A}/${a.id}/destroy`, {});
    const on = (
      await create({ type: 'webhook', enabled: true, json: { url: 'https://on.example.test/', secret: WHSEC } })
    ).json[0].id;
    const off = (await create({ type: 'sms', enabled: false, json: SMS })).json[0].id;

    const created = eventsOfKind('notification.agent.created').at(-1)!;
    expect(created.data).toEqual({ id: off, type: 'sms', enabled: false });
    expect(created.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(deliveriesOf(created.id)).toEqual([{ agent_id: on, state: 'pending', attempts: 0 }]);

    await t.call('POST', `${A}/${off}/update`, { body: { enabled: true } });
    const updated = eventsOfKind('notification.agent.updated').at(-1)!;
    expect(updated.data).toEqual({ id: off, type: 'sms', enabled: true, changed: ['enabled'] });
    expect(deliveriesOf(updated.id)).toEqual([
      { agent_id: on, state: 'pending', attempts: 0 },
      { agent_id: off, state: 'pending', attempts: 0 },
    ]);

    // Disabling cancels what the agent had not received yet.
    await t.call('POST', `${A}/${off}/update`, { body: { enabled: false } });
    expect(deliveriesOf(updated.id)).toEqual([
      { agent_id: on, state: 'pending', attempts: 0 },
      { agent_id: off, state: 'cancelled', attempts: 0 },
    ]);

    await t.call('POST', `${A}/${on}/destroy`, {});
    const destroyed = eventsOfKind('notification.agent.destroyed').at(-1)!;
    expect(destroyed.data).toEqual({ id: on, type: 'webhook' });
    expect(deliveriesOf(destroyed.id)).toEqual([]);
    expect(deliveriesOf(created.id)).toEqual([{ agent_id: on, state: 'cancelled', attempts: 0 }]);

    const everything =
      JSON.stringify(t.host.db.prepare('SELECT * FROM events').all()) +
      JSON.stringify(t.host.db.prepare('SELECT * FROM deliveries').all());
    for (const s of SECRETS) expect(everything).not.toContain(s);
  });

  it('GET /notification/events lists recent events newest first with each delivery', async () => {
    const id = (await create({ type: 'webhook', enabled: true, json: { url: 'https://list.example.test/' } })).json[0]
      .id;
    await t.call<Agent[]>('POST', `${A}/${id}/update`, { body: { json: { url: 'https://list2.example.test/' } } });
    const r = await t.call<NotificationEvent[]>('GET', '/api/v2/notification/events?limit=2');
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(2);
    const [upd, cre] = r.json;
    expect(upd).toMatchObject({
      kind: 'notification.agent.updated',
      data: { id, changed: ['json'] },
      deliveries: [{ agentId: id, state: 'pending', attempts: 0, lastError: null, deliveredAt: null }],
    });
    expect(cre).toMatchObject({ kind: 'notification.agent.created', data: { id, type: 'webhook', enabled: true } });
    expect(upd.seq).toBe(cre.seq + 1);
    expect(new Date(upd.deliveries[0].nextAttemptAt ?? 0).getTime()).toBeLessThanOrEqual(Date.now());
    // No worker runs here: both are pending, and the agent's queue is held by its oldest one.
    expect(upd.deliveries[0].heldBy).toBe(cre.id);
    expect(cre.deliveries.find((d) => d.agentId === id)).toMatchObject({ state: 'pending', heldBy: null });
    // The head is found even when it is outside the listed window.
    expect(
      (await t.call<NotificationEvent[]>('GET', '/api/v2/notification/events?limit=1')).json[0].deliveries[0],
    ).toMatchObject({ agentId: id, heldBy: cre.id });
    t.host.db.prepare("UPDATE deliveries SET state = 'failed' WHERE event_id = ? AND agent_id = ?").run(cre.id, id);
    expect(
      (await t.call<NotificationEvent[]>('GET', '/api/v2/notification/events?limit=1')).json[0].deliveries[0],
    ).toMatchObject({ agentId: id, state: 'pending', heldBy: null });

    const only = await t.call<NotificationEvent[]>(
      'GET',
      '/api/v2/notification/events?kind=notification.agent.destroyed',
    );
    expect(only.json.length).toBeGreaterThan(0);
    expect(only.json.every((e: { kind: string }) => e.kind === 'notification.agent.destroyed')).toBe(true);
    expect(paths(await t.call('GET', '/api/v2/notification/events?limit=0'))).toEqual(['query.limit: must be 1-500']);
  });
});

describe('permissions and the test route', () => {
  it('notification:read lists; creating, changing and testing need notification:manage', async () => {
    const reader = await t.token(['notification:read']);
    expect((await t.call('GET', A, { token: reader })).status).toBe(200);
    expect((await t.call('GET', '/api/v2/notification/events', { token: reader })).status).toBe(200);
    const id = (await create({ type: 'webhook', enabled: false, json: { url: 'https://p.example.test/' } })).json[0].id;
    for (const [m, p] of [
      ['POST', `${A}/create`],
      ['POST', `${A}/${id}/update`],
      ['POST', `${A}/${id}/destroy`],
      ['GET', `${A}/${id}/test`],
    ]) {
      const r = await t.call(m, p, { token: reader, body: m === 'POST' ? { enabled: true } : undefined });
      expect(r.status, p).toBe(403);
      expect(errorOf(r).message).toBe('token lacks permission notification:manage');
    }
    expect((await t.call('GET', A, { token: await t.token(['network:manage']) })).status).toBe(403);
  });

  it('test: 404 for an unknown agent; a refused destination is a 502 that says why, without secrets', async () => {
    expect(errorOf(await t.call('GET', `${A}/424242/test`))).toMatchObject({ code: 'not_found' });
    const port = await closedPort();
    const id = (
      await create({
        type: 'webhook',
        enabled: false,
        json: { url: `http://127.0.0.1:${port}/hook?token=abc`, secret: WHSEC },
      })
    ).json[0].id;
    const r = await t.call('GET', `${A}/${id}/test`);
    expect(r.status).toBe(502);
    expect(errorOf(r).code).toBe('bad_gateway');
    expect(errorOf(r).message).toBe(
      `the webhook agent ${id} could not send the test message: webhook http://127.0.0.1:${port} is unreachable: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    const audit = t.host.db
      .prepare("SELECT argv, exit_code, note FROM audit_log WHERE kind = 'notification/test' ORDER BY id DESC LIMIT 1")
      .get();
    expect(audit).toEqual({
      argv: JSON.stringify([`agent:${id}`, 'webhook']),
      exit_code: 1,
      note: `webhook http://127.0.0.1:${port} is unreachable: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
    expect(r.text).not.toContain('token=abc');
    for (const s of SECRETS) expect(r.text + JSON.stringify(audit)).not.toContain(s);
  });
});

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

describe('credentials inside a webhook URL (issue 27 item 11)', () => {
  const USER = 'hook-user';
  const PASS = 'hook-pa55';
  const TOKEN = 'tok-s3cret';
  const URL_SECRETS = [USER, PASS, TOKEN, 'team-0ps', 'bare-k3y'];
  const REAL = `https://${USER}:${PASS}@hooks.example.test/in?token=${TOKEN}&team=team-0ps&bare-k3y`;
  const MASKED = 'https://********:********@hooks.example.test/in?token=********&team=********&********';
  const urlOf = (id: number) => (JSON.parse(stored(id)!.json) as { url: string }).url;
  const rawUrlOf = (id: number) => (JSON.parse(rawRow(id)!.json) as { url: string }).url;
  const update = (id: number, body: unknown) => t.call<Agent[]>('POST', `${A}/${id}/update`, { body });
  let id: number;
  beforeAll(async () => {
    const r = await create({ type: 'webhook', enabled: true, json: { url: REAL, secret: WHSEC } });
    expect(r.status, r.text).toBe(200);
    id = r.json[0].id;
  });

  it('are sealed at rest part by part, masked in every answer, and opened back to the URL the client gave', async () => {
    // at rest: no credential in clear, each one sealed where it stands
    const raw = rawRow(id)!.json;
    for (const s of URL_SECRETS) expect(raw, s).not.toContain(s);
    const u = new URL(rawUrlOf(id));
    expect([u.origin, u.pathname]).toEqual(['https://hooks.example.test', '/in']);
    for (const part of [u.username, u.password, u.searchParams.get('token'), u.searchParams.get('team')])
      expect(decodeURIComponent(part ?? '')).toMatch(/^enc:v1:[A-Za-z0-9+/]+=*$/);
    expect(urlOf(id)).toBe(REAL);

    const list = await t.call<Agent[]>('GET', A);
    const details = await t.call<Agent[]>('GET', `${A}/${id}/details`);
    expect(details.json[0].json).toEqual({ url: MASKED, secret: '********' });
    expect(list.json.find((a) => a.id === id)?.json).toEqual({ url: MASKED, secret: '********' });
    for (const s of URL_SECRETS) expect(list.text + details.text, s).not.toContain(s);
    // the answers to create and update mask them too
    const created = await create({ type: 'webhook', enabled: false, json: { url: REAL } });
    expect(created.json[0].json).toEqual({ url: MASKED });
    for (const s of URL_SECRETS) expect(created.text, s).not.toContain(s);
    await t.call('POST', `${A}/${created.json[0].id}/destroy`, {});
  });

  it('an update that sends the masked URL back keeps them, with the path or other parts changed', async () => {
    const same = await update(id, { json: { url: MASKED } });
    expect(same.status, same.text).toBe(200);
    expect(urlOf(id)).toBe(REAL);
    // the same masked URL is no change at all
    expect(eventsOfKind('notification.agent.updated').filter((e) => e.data.id === id)).toEqual([]);

    const moved = await update(id, {
      json: { url: 'https://********:new-pa55@hooks.example.test/v2?team=********&token=********&x=1&********' },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json[0].json).toHaveProperty(
      'url',
      'https://********:********@hooks.example.test/v2?team=********&token=********&x=********&********',
    );
    expect(urlOf(id)).toBe(`https://${USER}:new-pa55@hooks.example.test/v2?team=team-0ps&token=${TOKEN}&x=1&bare-k3y`);
    expect(rawRow(id)!.json).not.toContain('new-pa55');

    // enabled alone, or another field merged: the sealed URL stays as it is
    const before = rawUrlOf(id);
    expect((await update(id, { enabled: false })).status).toBe(200);
    expect((await update(id, { json: { secret: WHSEC } })).status).toBe(200);
    expect((await update(id, { enabled: true })).status).toBe(200);
    expect(rawUrlOf(id)).toBe(before);

    const events = JSON.stringify(t.host.db.prepare('SELECT * FROM events').all());
    for (const s of [...URL_SECRETS, 'new-pa55']) expect(events, s).not.toContain(s);
    expect(eventsOfKind('notification.agent.updated').at(-1)!.data).toEqual({
      id,
      type: 'webhook',
      enabled: true,
      changed: ['enabled'],
    });
  });

  it('a masked credential goes nowhere else: another origin, a place the stored URL has no value, a new agent', async () => {
    const before = rawRow(id)!.json;
    const elsewhere = await update(id, { json: { url: 'https://********:********@evil.example.test/v2' } });
    expect(paths(elsewhere)).toEqual([
      'body.json.url: holds the mask ******** but its origin changed (https://hooks.example.test → https://evil.example.test): send the credentials for the new destination in clear',
    ]);
    const port = await update(id, { json: { url: 'https://********:********@hooks.example.test:8443/v2' } });
    expect(paths(port)[0]).toContain(
      'its origin changed (https://hooks.example.test → https://hooks.example.test:8443)',
    );
    const scheme = await update(id, { json: { url: 'http://********:********@hooks.example.test/v2' } });
    expect(paths(scheme)[0]).toContain('its origin changed');
    const nowhere = await update(id, { json: { url: 'https://hooks.example.test/v2?other=********' } });
    expect(paths(nowhere)).toEqual([
      'body.json.url: holds the mask ******** where the stored URL has no value: send the real one',
    ]);
    const second = await update(id, { json: { url: 'https://hooks.example.test/v2?token=x&token=********' } });
    expect(paths(second)[0]).toContain('where the stored URL has no value');
    expect(rawRow(id)!.json).toBe(before);

    const fresh = await create({ type: 'webhook', enabled: true, json: { url: MASKED } });
    expect(paths(fresh)).toEqual([
      'body.json.url: holds the mask ********, not a value: send the real credentials, or on update send back the URL the agent shows to keep them',
    ]);
    const encoded = await create({
      type: 'webhook',
      enabled: true,
      json: { url: 'https://u:%2A%2A%2A%2A%2A%2A%2A%2A@h.example.test/' },
    });
    expect(paths(encoded)[0]).toContain('holds the mask');
    const sealedLooking = await create({
      type: 'webhook',
      enabled: true,
      json: { url: 'https://h.example.test/?token=enc:v1:AAAA' },
    });
    expect(paths(sealedLooking)).toEqual(['body.json.url: must not hold a value starting with enc:v1:']);
    // a type change carries nothing over
    const smsId = (await create({ type: 'sms', enabled: false, json: SMS })).json[0].id;
    const typed = await update(smsId, { type: 'webhook', json: { url: MASKED } });
    expect(paths(typed)[0]).toContain('body.json.url: holds the mask');
  });
});
