import {
  API_TOKEN_DEFAULT_DAYS,
  TOKENS_CREATE_OP,
  TOKENS_LIST_OP,
  TOKENS_REVOKE_OP,
  tokenCreatePayload,
  tokenRevokePayload,
  tokensSettings,
} from '../../handlers/tokens/contract';
import { ungrantable } from '../../handlers/core/auth';
import { payloadOf } from '../system/host-op';
import { SystemRefusal } from '../system/types';
import { createToken, listTokens, liveTokenByIdOrName, revokeTokenById, tokenById } from '../tokens';
import { telemetryOf } from '../ops/telemetry';
import type { SqliteDb } from '../db/database';
import { defineArea } from './types';

const DAY_MS = 86_400_000;

/** The calling token as stored now (the op never trusts a permission list a route sends). */
function caller(db: SqliteDb, id: string) {
  const t = tokenById(db, id);
  if (!t || t.revokedAt !== null) throw new SystemRefusal('forbidden', 'the calling token is not live');
  return t;
}

/**
 * Tokens over HTTP (runtime/tokens.ts does the work, as for the CLI): a token mints only
 * permissions it holds, naming areas some route has, expiring within API_TOKEN_MAX_DAYS and
 * never after the calling token; it revokes only tokens whose permissions it holds.
 */
export default defineArea({
  name: 'tokens',
  settings: tokensSettings,
  setup: (host) => ({
    ops: {
      [TOKENS_LIST_OP]: () => Promise.resolve(listTokens(host.db)),
      [TOKENS_CREATE_OP]: async (p) => {
        const body = payloadOf(tokenCreatePayload, TOKENS_CREATE_OP, p);
        const by = caller(host.db, body.by);
        const lacking = ungrantable(by.permissions, body.permissions);
        if (lacking !== undefined)
          throw new SystemRefusal('forbidden', `the calling token cannot grant ${lacking}: it does not hold it`);
        const areas = telemetryOf(host.db)?.permissionAreas;
        const now = Date.now();
        let expiresAt = now + (body.expiresInDays ?? API_TOKEN_DEFAULT_DAYS) * DAY_MS;
        if (by.expiresAt !== null && expiresAt > by.expiresAt) {
          if (body.expiresInDays !== undefined)
            throw new SystemRefusal(
              'bad_request',
              `expiresInDays: the token would outlive the calling token (it expires ${new Date(by.expiresAt).toISOString()})`,
            );
          expiresAt = by.expiresAt;
        }
        try {
          const made = await createToken(host.db, body.name, body.permissions, expiresAt, areas);
          return {
            id: made.id,
            name: body.name,
            token: made.token,
            permissions: body.permissions,
            expiresAt: new Date(expiresAt).toISOString(),
          };
        } catch (e) {
          const message = (e as Error).message;
          throw new SystemRefusal(/already exists/.test(message) ? 'conflict' : 'bad_request', message);
        }
      },
      [TOKENS_REVOKE_OP]: (p) => {
        const body = payloadOf(tokenRevokePayload, TOKENS_REVOKE_OP, p);
        const by = caller(host.db, body.by);
        const target = liveTokenByIdOrName(host.db, body.idOrName);
        if (!target) throw new SystemRefusal('not_found', `no live token with id or name ${body.idOrName}`);
        const held = tokenById(host.db, target.id)?.permissions ?? [];
        const lacking = ungrantable(by.permissions, held);
        if (lacking !== undefined)
          throw new SystemRefusal('forbidden', `the calling token cannot revoke a token holding ${lacking}`);
        revokeTokenById(host.db, target.id);
        const revokedAt = tokenById(host.db, target.id)?.revokedAt ?? Date.now();
        return Promise.resolve({ id: target.id, name: target.name, revokedAt: new Date(revokedAt).toISOString() });
      },
    },
  }),
});
