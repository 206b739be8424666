/**
 * The hop's token row (handlers/core/hop.ts): believed only with this isolate's hop secret, only
 * for the id the call's token names, and a use recorded through the host (`/tokens/touch`), whose
 * cache follows. A route called with the row checks the secret against it like any other row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { route } from '../../handlers/core/route';
import { sha256Hex, TOKEN_ROW_SQL } from '../../handlers/core/auth';
import { encodeTokenRow, hopTokenLookup, HOP_SECRET_HEADER, TOKEN_ROW_HEADER } from '../../handlers/core/hop';
import type { Env, Fetcher, TokenRecord } from '../../handlers/core/bindings';
import type { Call } from '../../handlers/core/pipeline';
import { createToken } from '../../runtime/tokens';
import { makeTestHost, type TestHost } from '../helpers/host';

const SECRET = 'hop-secret-0123456789abcdefghijklmnopqrstuvw';
const ID = '0123456789ab';
const TOKEN = `blt_${ID}_${'s'.repeat(43)}`;
const ROW: TokenRecord = {
  id: ID,
  name: 'ops-é',
  hash: 'h'.repeat(64),
  permissions: '["*"]',
  expires_at: null,
  revoked_at: null,
  last_used_at: 5,
};

const callWith = (headers: Record<string, string>): Pick<Call, 'header'> => ({
  header: (name) => headers[name.toLowerCase()] ?? null,
});
const forwarded = (over: Record<string, string> = {}) =>
  callWith({ token: TOKEN, [HOP_SECRET_HEADER]: SECRET, [TOKEN_ROW_HEADER]: encodeTokenRow(ROW), ...over });

/** A DB_FETCH that records what it was asked. */
function recordingFetcher(seen: { path: string; body: unknown }[]): Fetcher {
  return {
    async fetch(input: Request | string, init?: RequestInit) {
      const url = typeof input === 'string' ? input : input.url;
      seen.push({ path: new URL(url).pathname, body: JSON.parse(String(init?.body)) });
      return new Response('null', { status: 200 });
    },
  } as Fetcher;
}

const env = (over: Partial<Env> = {}) => ({ HOP_SECRET: SECRET, VARS: {}, ...over }) as unknown as Env;

describe('hopTokenLookup', () => {
  it('answers the forwarded row for the id the token names, and nothing for another id', () => {
    const l = hopTokenLookup(env(), forwarded());
    expect(l?.token(ID)).toEqual(ROW);
    expect(l?.token('ba9876543210')).toBeNull();
  });

  it('is not used without the secret, with a wrong one, a prefix of it, or one an embedder never set', () => {
    const oneOff = SECRET.slice(0, -1) + (SECRET.endsWith('w') ? 'x' : 'w');
    expect(hopTokenLookup(env(), forwarded({ [HOP_SECRET_HEADER]: oneOff }))).toBeUndefined();
    expect(hopTokenLookup(env(), forwarded({ [HOP_SECRET_HEADER]: SECRET.slice(0, -1) }))).toBeUndefined();
    expect(hopTokenLookup(env(), callWith({ token: TOKEN, [TOKEN_ROW_HEADER]: encodeTokenRow(ROW) }))).toBeUndefined();
    expect(hopTokenLookup(env({ HOP_SECRET: undefined }), forwarded())).toBeUndefined();
    // an env whose secret is empty believes nothing, not even an empty header
    expect(hopTokenLookup(env({ HOP_SECRET: '' }), forwarded({ [HOP_SECRET_HEADER]: '' }))).toBeUndefined();
  });

  it('reads the token header as the route does (spaces around it trimmed), and without one finds nothing', () => {
    expect(hopTokenLookup(env(), forwarded({ token: `  ${TOKEN} ` }))?.token(ID)).toEqual(ROW);
    const none = callWith({ [HOP_SECRET_HEADER]: SECRET, [TOKEN_ROW_HEADER]: encodeTokenRow(ROW) });
    expect(hopTokenLookup(env(), none)?.token(ID)).toBeNull();
  });

  it('a row that names another id than the token is no row', () => {
    const l = hopTokenLookup(env(), forwarded({ [TOKEN_ROW_HEADER]: encodeTokenRow({ ...ROW, id: 'ba9876543210' }) }));
    expect(l?.token(ID)).toBeNull();
    expect(l?.token('ba9876543210')).toBeNull();
  });

  it('`null` is the host saying there is no such token; a missing or malformed row falls back to the DB', () => {
    expect(hopTokenLookup(env(), forwarded({ [TOKEN_ROW_HEADER]: 'null' }))?.token(ID)).toBeNull();
    const fallsBack = (row: string | undefined) =>
      hopTokenLookup(
        env(),
        callWith({
          token: TOKEN,
          [HOP_SECRET_HEADER]: SECRET,
          ...(row === undefined ? {} : { [TOKEN_ROW_HEADER]: row }),
        }),
      );
    expect(fallsBack(undefined)).toBeUndefined();
    expect(fallsBack('%E0%A4%A')).toBeUndefined(); // not URI-decodable
    expect(fallsBack('{')).toBeUndefined();
    expect(fallsBack('[]')).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, hash: 1 })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, permissions: ['*'] })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, revoked_at: '1' })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, expires_at: true })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, last_used_at: undefined })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, name: null })))).toBeUndefined();
    expect(fallsBack(encodeURIComponent(JSON.stringify({ ...ROW, id: 7 })))).toBeUndefined();
  });

  it('records a use by asking the host (tokens/touch with the id only)', async () => {
    const seen: { path: string; body: unknown }[] = [];
    await hopTokenLookup(env({ DB_FETCH: recordingFetcher(seen) }), forwarded())?.touch(ID, 123);
    expect(seen).toEqual([{ path: '/tokens/touch', body: { id: ID } }]);
  });
});

describe('a route called over the hop', () => {
  let t: TestHost;
  const probe = route({
    method: 'GET',
    path: '/speedtest/whoami',
    permission: 'speedtest:read',
    summary: 'who called',
    response: z.object({ name: z.string() }),
    handler: async ({ principal }) => ({ name: principal.name }),
  });
  beforeAll(async () => {
    t = await makeTestHost();
  });
  afterAll(() => t.close());

  /** The route with the host's DB and the hop (no TOKENS_DIRECT, as in an isolate). */
  const ask = async (token: string, row: TokenRecord | null, secret = SECRET) => {
    const r = await probe.fetch(
      new Request('http://x/api/v2/speedtest/whoami', {
        headers: { token, [HOP_SECRET_HEADER]: secret, [TOKEN_ROW_HEADER]: encodeTokenRow(row) },
      }),
      { ...t.host.env, TOKENS_DIRECT: undefined, HOP_SECRET: SECRET },
    );
    return [r.status, await r.text()];
  };

  it('checks the secret against the forwarded row: its own secret passes, the row of another secret does not', async () => {
    const { id, token } = await createToken(t.host.db, 'hop-a', ['*']);
    const row = t.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord;
    expect(await ask(token, row)).toEqual([200, '{"name":"hop-a"}']);
    // the row is the host's word (a client cannot send one: the host drops those headers,
    // test/edge/isolate-hop.test.ts); the presented secret is still checked against its hash
    const other = { ...row, hash: await sha256Hex('x'.repeat(43)) };
    expect((await ask(token, other))[0]).toBe(401);
    expect(await ask(token, { ...row, revoked_at: 1 })).toEqual([401, expect.stringContaining('"token revoked"')]);
    expect((await ask(token, null))[0]).toBe(401);
  });

  it('with a wrong hop secret the row is ignored and the DB decides (a revoked row does not lock out a live token)', async () => {
    const { id, token } = await createToken(t.host.db, 'hop-b', ['*']);
    const row = t.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord;
    expect(await ask(token, { ...row, revoked_at: 1 }, `${SECRET}x`)).toEqual([200, '{"name":"hop-b"}']);
  });

  it('a first use is recorded through /tokens/touch: the DB row and the host cache both get the time', async () => {
    const { id, token } = await createToken(t.host.db, 'hop-c', ['*']);
    const row = t.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord;
    expect(row.last_used_at).toBeNull();
    const before = Date.now();
    const fetcher: Fetcher = {
      fetch: async (input: Request | string, init?: RequestInit) => {
        const a = await t.host.bindings.call(new URL(String(input)).pathname, String(init?.body), undefined);
        return new Response(a.body, { status: a.status });
      },
    } as Fetcher;
    const r = await probe.fetch(
      new Request('http://x/api/v2/speedtest/whoami', {
        headers: { token, [HOP_SECRET_HEADER]: SECRET, [TOKEN_ROW_HEADER]: encodeTokenRow(row) },
      }),
      { ...t.host.env, DB: undefined, DB_FETCH: fetcher, TOKENS_DIRECT: undefined, HOP_SECRET: SECRET },
    );
    expect(r.status).toBe(200);
    const used = (t.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord).last_used_at ?? 0;
    expect(used).toBeGreaterThanOrEqual(before);
    expect(used).toBeLessThanOrEqual(Date.now());
    expect(t.host.env.TOKENS_DIRECT?.token(id)?.last_used_at).toBe(used);
  });

  it('/tokens/touch takes a token id and nothing else', async () => {
    const call = (body: string) => t.host.bindings.call('/tokens/touch', body, undefined);
    for (const bad of ['', '{}', '{"id":"0123456789aB"}', '{"id":"0123456789a"}', '{"id":"0123456789abc"}', 'null'])
      expect([bad, await call(bad)]).toEqual([
        bad,
        { status: 400, body: '{"error":{"code":"bad_request","message":"tokens/touch takes { id }"}}' },
      ]);
    expect(await call('{"id":"0123456789ab"}')).toEqual({ status: 200, body: 'null' });
  });
});
