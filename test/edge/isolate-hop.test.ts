/**
 * The hop to a real isolate (Deno and workerd): the calling token's row travels with the
 * forwarded request (handlers/core/hop.ts), so a token check costs no binding round trip; a
 * client cannot send a row of its own; a revocation from another process is seen at the next
 * request; a first use is recorded in the DB and the host's cache.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex, TOKEN_ROW_SQL } from '../../handlers/core/auth';
import { encodeTokenRow, HOP_SECRET_HEADER, TOKEN_ROW_HEADER } from '../../handlers/core/hop';
import type { TokenRecord } from '../../handlers/core/bindings';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig } from '../helpers/host';

describe.each(['deno', 'workerd'] as const)('the hop to %s', (isolate) => {
  let s: Serving;
  const ops: string[] = [];
  beforeAll(async () => {
    const { config } = makeTestConfig({ isolate });
    s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
    // every binding operation the isolate asks for, by path
    const call = s.host.bindings.call.bind(s.host.bindings);
    s.host.bindings.call = (path, body, requestId) => {
      ops.push(path);
      return call(path, body, requestId);
    };
  }, 60_000);
  afterAll(() => s?.stop());

  const get = async (token: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${s.server.url}/api/v2/notification/agent`, { headers: { token, ...headers } });
    return [r.status, await r.text()];
  };

  it('a DB route costs one binding operation (its read); the first use of a token one more (the touch)', async () => {
    const { token } = await createToken(s.host.db, 'hop-one', ['*']);
    ops.length = 0;
    expect(await get(token)).toEqual([200, '[]']);
    expect(ops).toEqual(['/tokens/touch', '/db/all']);
    ops.length = 0;
    expect(await get(token)).toEqual([200, '[]']);
    expect(ops).toEqual(['/db/all']);
  });

  it("a client's own hop headers are dropped: a row made for a secret of its choosing does not let it in", async () => {
    const { id, token } = await createToken(s.host.db, 'hop-forged', ['*']);
    const row = s.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord;
    const mine = 'A'.repeat(43);
    const forged = { ...row, hash: await sha256Hex(mine) };
    const headers = { [HOP_SECRET_HEADER]: 'guess', [TOKEN_ROW_HEADER]: encodeTokenRow(forged) };
    expect(await get(`blt_${id}_${mine}`, headers)).toEqual([401, expect.stringContaining('"code":"unauthorized"')]);
    // and the real token still passes with the same made-up headers beside it
    expect(await get(token, headers)).toEqual([200, '[]']);
  });

  it('a revocation written by another process is seen at the next request', async () => {
    const { id, token } = await createToken(s.host.db, 'hop-revoked', ['*']);
    expect(await get(token)).toEqual([200, '[]']);
    const other = new Database(s.host.db.name);
    try {
      other.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ?').run(Date.now(), id);
    } finally {
      other.close();
    }
    expect(await get(token)).toEqual([401, expect.stringContaining('"message":"token revoked"')]);
  });

  it("a token's first use through the isolate is in the DB, and the host's cache has the same time", async () => {
    const { id, token } = await createToken(s.host.db, 'hop-touched', ['*']);
    const before = Date.now();
    expect(await get(token)).toEqual([200, '[]']);
    const used = (s.host.db.prepare(TOKEN_ROW_SQL).get(id) as TokenRecord).last_used_at ?? 0;
    expect(used).toBeGreaterThanOrEqual(before);
    expect(s.host.env.TOKENS_DIRECT?.token(id)?.last_used_at).toBe(used);
  });
});
