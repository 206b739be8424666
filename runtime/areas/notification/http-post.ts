import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isLocalAddress } from '../../../handlers/notification/contract';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The first MAX_BODY bytes of the answer, as text. */
  body: string;
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Trusted CAs for https (undefined: Node's defaults). */
  ca?: string[];
  /** HTTP Basic credentials, sent in the Authorization header. */
  auth?: { user: string; password: string };
  /** Refuse to connect when the name resolves to a loopback, link-local or unspecified address. */
  refuseLocal?: boolean;
}

export class LocalTargetError extends Error {
  constructor(readonly address: string) {
    super(`resolves to the local address ${address}`);
  }
}

/** dns.lookup that refuses local answers, so a name cannot be pointed at this machine. */
export const refusingLocal: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 4);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isLocalAddress(a.address));
    if (bad) return callback(new LocalTargetError(bad.address), '', 4);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0].address, list[0].family);
  });
};

const MAX_BODY = 64 * 1024;

/**
 * One POST with node:http(s) rather than fetch: it takes our trusted CAs, never follows a
 * redirect (a 3xx is an answer, and for webhooks a failure), and has one time limit for the
 * whole exchange. Network failures reject with Node's error (ECONNREFUSED, ETIMEDOUT, …).
 */
export function post(url: URL, o: PostOptions): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...o.headers, 'content-length': Buffer.byteLength(o.body) };
    if (o.auth) headers.authorization = `Basic ${Buffer.from(`${o.auth.user}:${o.auth.password}`).toString('base64')}`;
    const options = {
      method: 'POST',
      headers,
      ca: o.ca,
      signal: AbortSignal.timeout(o.timeoutMs),
      ...(o.refuseLocal ? { lookup: refusingLocal } : {}),
    };
    const req = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e instanceof LocalTargetError) return reject(e);
      reject(
        e.name === 'AbortError' || e.name === 'TimeoutError' ? new Error(`no answer within ${o.timeoutMs} ms`) : e,
      );
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_BODY) chunks.push(c.subarray(0, MAX_BODY - size));
        size += c.length;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.end(o.body);
  });
}

/** `Retry-After` as milliseconds (seconds or an HTTP date), when the answer has one. */
export function retryAfterMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const v = headers['retry-after'];
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** A short, single-line excerpt of an answer body for an error message. */
export function excerpt(body: string, max = 200): string {
  const one = body.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max)}…`;
}
