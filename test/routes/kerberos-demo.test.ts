/**
 * The demo appliance (npm start) answers every Kerberos route from fixtures/demo: its replay
 * fixtures must match, argv for argv, what the routes run with the demo's paths, and its seed
 * files must be what the conf and realm routes accept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDemoHost, repo, type TestHost } from '../helpers/host';
import { KERBEROS_ROUTES } from './kerberos-helpers';
import { errorOf } from '../helpers/answers';
import type { RealmFile, keyListAnswer, ticketListAnswer } from '../../handlers/kerberos/responses';
import type * as z from 'zod';
import type { Krb5Section } from '../../handlers/kerberos/parse/krb5-conf';

/** The Kerberos routes' answers (their response schemas in handlers/kerberos/requests.ts) */
type TicketList = z.infer<typeof ticketListAnswer>;
type KeyList = z.infer<typeof keyListAnswer>;

let d: TestHost;

beforeAll(async () => {
  d = await makeDemoHost({ routes: KERBEROS_ROUTES });
});
afterAll(async () => {
  await d?.close();
});

async function call<T = unknown>(method: string, path: string, body?: unknown) {
  const r = await d.call<T>(method, `/api/v2/kerberos${path}`, { body });
  return { status: r.status, json: r.json };
}

describe('the demo appliance', () => {
  it('lists its ticket cache', async () => {
    const r = await call<TicketList>('GET', '/ticket/list');
    expect(r.status).toBe(200);
    expect(r.json.json).toEqual({
      cache: 'FILE:/tmp/krb5cc_0',
      defaultPrincipal: 'administrator@CORP.EXAMPLE.COM',
      tickets: [
        {
          service: 'krbtgt/CORP.EXAMPLE.COM@CORP.EXAMPLE.COM',
          start: '2026-11-25T22:13:20Z',
          expires: '2026-11-26T08:13:20Z',
          renewUntil: '2026-12-02T22:13:20Z',
        },
        {
          service: 'ldap/dc01.corp.example.com@CORP.EXAMPLE.COM',
          start: '2026-11-25T22:13:20Z',
          expires: '2026-11-26T08:13:20Z',
          renewUntil: '2026-12-02T22:13:20Z',
        },
      ],
    });
  });

  it('lists the keys of its default keytab (argv with $ROOT expanded to the demo root)', async () => {
    const r = await call<KeyList>('POST', '/key/list', {});
    expect(r.status).toBe(200);
    expect(r.json.json.keys.map((k) => `${k.kvno} ${k.principal} ${k.enctype}`)).toEqual([
      '3 host/nas01.corp.example.com@CORP.EXAMPLE.COM aes256-cts-hmac-sha1-96',
      '3 host/nas01.corp.example.com@CORP.EXAMPLE.COM aes128-cts-hmac-sha1-96',
      '3 nfs/nas01.corp.example.com@CORP.EXAMPLE.COM aes256-cts-hmac-sha1-96',
      '3 nfs/nas01.corp.example.com@CORP.EXAMPLE.COM aes128-cts-hmac-sha1-96',
    ]);
  });

  it('obtains for administrator (default realm of the seed krb5.conf) and from the keytab; refuses nobody', async () => {
    expect(await call('POST', '/ticket/obtain', { username: 'administrator', password: 'any demo password' })).toEqual({
      status: 200,
      json: { message: 'Kerberos ticket obtained for administrator@CORP.EXAMPLE.COM in realm CORP.EXAMPLE.COM' },
    });
    const n = await call('POST', '/ticket/obtain', { username: 'nobody', password: 'x' });
    expect(n.status).toBe(400);
    expect(errorOf(n).details?.kind).toBe('client-not-found');
    const k = await call('POST', '/ticket/obtain', { principal: 'host/nas01.corp.example.com' });
    expect(k.json).toEqual({
      message: 'Kerberos ticket obtained for host/nas01.corp.example.com@CORP.EXAMPLE.COM in realm CORP.EXAMPLE.COM',
    });
    const d = await call('POST', '/ticket/obtain', {});
    expect(d.status).toBe(400);
    expect(errorOf(d).details?.kind).toBe('keytab-no-suitable-keys');
  });

  it('destroys tickets', async () => {
    expect(await call('POST', '/ticket/destroy', {})).toEqual({
      status: 200,
      json: { message: 'Kerberos tickets destroyed' },
    });
  });

  it('its seed krb5.conf passes conf/update as it is, and lab.conf is listed', async () => {
    const seed = readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf'), 'utf8');
    expect((await call('POST', '/conf/update', { conf: seed })).status).toBe(200);
    const r = await call<Record<string, RealmFile>>('GET', '/realm');
    expect(Object.keys(r.json)).toEqual(['lab.conf']);
    expect((r.json['lab.conf'].json?.sections.realms['LAB.EXAMPLE.COM'] as Krb5Section | undefined)?.kdc).toEqual([
      'kdc.lab.example.com:88',
    ]);
    expect((await call<RealmFile>('GET', '/realm/lab/details')).json.raw).toBe(
      readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'),
    );
  });
});
