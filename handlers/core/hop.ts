/**
 * The hop from the Node host to the app in an isolate it spawned (runtime/isolate/hop.ts): the
 * host forwards each request with the calling token's row, so the isolate checks the token
 * without a binding round trip, against the host's own token cache (the one a revocation empties
 * at once). The row is believed only with the hop secret the host gave this isolate at start
 * (env.HOP_SECRET): an embedder's runtime, or a client that sends these headers, gets the DB
 * query as before.
 */
import { constantTimeEqual, tokenIdOf } from './auth';
import { bindingRpc, type Env, type TokenLookup, type TokenRecord } from './bindings';
import type { Call } from './pipeline';

/** The per-start secret that marks a request as forwarded by the host. */
export const HOP_SECRET_HEADER = 'x-ballast-hop';
/** The calling token's row (TOKEN_ROW_SQL's columns) as URI-encoded JSON, `null` for no such token. */
export const TOKEN_ROW_HEADER = 'x-ballast-token-row';

/** The row as the header carries it (encodeURIComponent keeps a UTF-8 token name within ASCII). */
export const encodeTokenRow = (row: TokenRecord | null): string => encodeURIComponent(JSON.stringify(row));

const nullableNumber = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

function decodeTokenRow(text: string): TokenRecord | null | undefined {
  let v: unknown;
  try {
    v = JSON.parse(decodeURIComponent(text));
  } catch {
    return undefined;
  }
  if (v === null) return null;
  const r = v as Partial<Record<keyof TokenRecord, unknown>>;
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  if (typeof r.id !== 'string' || typeof r.name !== 'string' || typeof r.hash !== 'string') return undefined;
  if (typeof r.permissions !== 'string') return undefined;
  if (!nullableNumber(r.expires_at) || !nullableNumber(r.revoked_at) || !nullableNumber(r.last_used_at))
    return undefined;
  return r as TokenRecord;
}

/**
 * The token lookup of a call the host forwarded: the row it sent, for the id the call's token
 * names; a use is recorded by the host (`POST /tokens/touch`, which updates its cache too).
 * undefined when the call did not come over the hop (no secret, a wrong one, no or a bad row):
 * the route then reads the row from the DB.
 */
export function hopTokenLookup(env: Env | undefined, call: Pick<Call, 'header'>): TokenLookup | undefined {
  const secret = env?.HOP_SECRET;
  const given = call.header(HOP_SECRET_HEADER);
  if (typeof secret !== 'string' || secret === '' || given === null || !constantTimeEqual(given, secret))
    return undefined;
  const text = call.header(TOKEN_ROW_HEADER);
  const row = text === null ? undefined : decodeTokenRow(text);
  if (row === undefined) return undefined;
  const id = tokenIdOf(call.header('token'));
  const fetcher = env?.DB_FETCH;
  return {
    token: (wanted) => (row !== null && wanted === id && row.id === wanted ? row : null),
    touch: async (wanted) => {
      if (fetcher) await bindingRpc(fetcher, 'tokens/touch', { id: wanted }, undefined, env?.BINDING_POST);
    },
  };
}
