/**
 * What the host does with each answered request and each audited command: one log line, the
 * metrics, and for a change or a refusal one `request` row of the audit trail (who, which route,
 * the outcome; its commands are the rows of the same request id).
 */
import { tokenIdOf } from '../../handlers/core/auth';
import { API_BASE } from '../../handlers/core/route-module';
import type { TokenLookup } from '../../handlers/core/bindings';
import type { AnsweredCall } from '../http/server';
import type { AuditRow } from '../db/audit';
import type { Logger } from './logger';
import { maskedQuery, requestLogger } from './logger';
import { toolOf, type HostMetrics } from './metrics';

/** The audit trail's row of a request (audit_log.kind). */
export const REQUEST_KIND = 'request';

/** What a `request` row's note holds (JSON): never a secret, never a body. */
export interface RequestNote {
  method: string;
  route: string | null;
  area: string | null;
  token: { id: string; name: string } | null;
  remote: string | null;
}

export interface RequestObserverOptions {
  logger?: Logger;
  metrics?: HostMetrics;
  /** writes an audit row through the host's batched writer (db/audit.ts opAudit) */
  audit?: (row: {
    kind: string;
    requestId: string;
    argv: unknown[];
    note: string;
    exitCode: number;
    durationMs: number;
  }) => void;
  /** the routes by method and pattern, to name a call no in-process route noted (isolation mode) */
  routes: readonly { method: string; path: string }[];
  /** the API's base path (`/api/v2`, `/`…): a request's path is matched under it */
  basePath: string;
  /** token rows by id: the name of a token an isolate authenticated */
  tokens?: TokenLookup;
}

const BODYLESS_READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `/api/v2/fs/mount` → `fs`; a path outside the API → null. */
export function areaOf(route: string | null): string | null {
  if (!route?.startsWith(`${API_BASE}/`)) return null;
  return route.slice(API_BASE.length + 1).split('/')[0] || null;
}

/**
 * Route patterns as a matcher, for a path the route did not name itself (isolation mode): the
 * first route in manifest order whose pattern matches, as the in-process router picks. A path
 * with no `:param` is a map lookup; only the patterns with one before it are tried as regular
 * expressions (this runs once per isolated request).
 */
export function routeMatcher(
  routes: readonly { method: string; path: string }[],
): (method: string, path: string) => string | null {
  const byMethod = new Map<
    string,
    { exact: Map<string, number>; params: { index: number; path: string; re: RegExp }[] }
  >();
  routes.forEach((r, index) => {
    let m = byMethod.get(r.method);
    if (!m) byMethod.set(r.method, (m = { exact: new Map(), params: [] }));
    if (!/:\w/.test(r.path)) {
      if (!m.exact.has(r.path)) m.exact.set(r.path, index);
      return;
    }
    const re = new RegExp(`^${r.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);
    m.params.push({ index, path: r.path, re });
  });
  return (method, path) => {
    const m = byMethod.get(method === 'HEAD' ? 'GET' : method);
    if (!m) return null;
    const exact = m.exact.get(path);
    for (const p of m.params) {
      if (exact !== undefined && p.index > exact) break;
      if (p.re.test(path)) return p.path;
    }
    return exact === undefined ? null : path;
  };
}

export function requestObserver(o: RequestObserverOptions): (a: AnsweredCall) => void {
  const match = routeMatcher(o.routes);
  const logger = o.logger && requestLogger(o.logger);
  const base = o.basePath === '/' ? '' : o.basePath.replace(/\/+$/, '');
  return ({ call, status, ms }) => {
    const path = call.url.pathname;
    // in-process, the route noted its pattern and its caller; an isolate's call is matched here
    let route = call.note?.route ?? null;
    if (!route && path.startsWith(base)) route = match(call.method, API_BASE + path.slice(base.length));
    let token = call.note?.token ?? null;
    if (!call.note?.token && status !== 401 && status !== 403) {
      // the id in the header names the token (it is not the secret); only a token that was let
      // in. A host that forwarded the call looked its row up already (CallNote.presented).
      let row = call.note?.presented;
      if (row === undefined) {
        const id = tokenIdOf(call.header('token'));
        row = id ? o.tokens?.token(id) : null;
      }
      if (row) token = { id: row.id, name: row.name };
    }
    const area = areaOf(route);
    const remote = call.connection.remoteAddress ?? null;
    const rounded = Math.round(ms * 10) / 10;
    o.metrics?.request({ method: call.method, route: route ?? 'unmatched', status, ms });
    if (logger) {
      const line = {
        reqId: call.requestId,
        method: call.method,
        path,
        query: maskedQuery(call.url.searchParams),
        status,
        ms: rounded,
        token,
        remote,
        area,
        route,
      };
      if (status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    }
    if (o.audit && (!BODYLESS_READS.has(call.method) || status === 401 || status === 403)) {
      const note: RequestNote = { method: call.method, route, area, token, remote };
      o.audit({
        kind: REQUEST_KIND,
        requestId: call.requestId,
        argv: [call.method, path],
        note: JSON.stringify(note),
        exitCode: status,
        durationMs: Math.round(ms),
      });
    }
  };
}

/** The SYSTEM service's observer: a log line and the metrics of each command (exec, pty). */
export function commandObserver(o: {
  logger?: Logger;
  metrics?: HostMetrics;
}): (row: AuditRow, argv: readonly unknown[]) => void {
  // the line's fields are the host's own (the tool's name, exit, time, the audit row's note)
  const logger = o.logger && requestLogger(o.logger);
  return (row, argv) => {
    if (row.kind !== 'exec' && row.kind !== 'pty') return;
    const tool = toolOf(argv);
    o.metrics?.command({ tool, exitCode: row.exitCode, ms: row.durationMs });
    logger?.info(
      {
        reqId: row.requestId,
        tool,
        exitCode: row.exitCode,
        ms: row.durationMs,
        ...(row.note ? { note: row.note } : {}),
      },
      'command',
    );
  };
}
