/**
 * The host's one logger (pino): JSON lines by default, each with `level`, `time` and what the
 * line is about (`reqId`, `method`, `path`…), or a human line per entry for a terminal
 * (`--log-format text`). Everything the host says goes through it: requests, commands, start-up,
 * shutdown, journal recovery, area start-up tasks and notification delivery failures.
 *
 * Secrets: the request log never takes a header or a body; a query value whose key names a
 * secret is masked (maskedQuery), and pino's redaction removes the same keys anywhere in a
 * line's object as a second net.
 */
import pino from 'pino';
import { bufferedWriter } from '../http/access-log';
import type { HostConfig } from '../config-types';

export type LogFormat = HostConfig['log']['format'];
export type LogLevel = HostConfig['log']['level'];

export type Logger = pino.Logger;

export interface LoggerOptions {
  format?: LogFormat;
  level?: LogLevel;
  /** Where finished lines go (default stdout, batched). Tests collect them. */
  write?: (chunk: string) => void;
}

/** Keys whose value is a secret wherever they appear (query strings, objects logged). */
export const SECRET_KEY = /(secret|passw|passphrase|token|api[-_]?key|private[-_]?key|credential|auth)/i;

/** pino's redaction: the same secret keys, at the top and one level down. */
const REDACT_KEYS = ['secret', 'password', 'passphrase', 'apiKey', 'authorization', 'headers', 'body'];
const REDACTED = new Set(REDACT_KEYS);
const REDACT_PATHS = [...REDACT_KEYS, ...REDACT_KEYS.map((k) => `*.${k}`)];

/** `token` is the request line's `{id, name}`; any other value under that key (a header's text) is hidden. */
const tokenField = (t: unknown): unknown =>
  t === null || (typeof t === 'object' && !Array.isArray(t) && Object.keys(t).every((k) => k === 'id' || k === 'name'))
    ? t
    : '***';

/**
 * The query string as a log shows it: every value under a key naming a secret, or under a key
 * pino's redaction names (`body`, `headers`…), is `***`: what redaction would have made of it,
 * so the request line needs none (requestLogger). The line's `token` field is an object of id
 * and name, never the header (tokenField).
 */
export function maskedQuery(params: URLSearchParams): Record<string, string | string[]> | undefined {
  let out: Record<string, string | string[]> | undefined;
  for (const [k, raw] of params) {
    const v = SECRET_KEY.test(k) || REDACTED.has(k) ? '***' : raw;
    out ??= {};
    const prev = out[k];
    out[k] = prev === undefined ? v : ([] as string[]).concat(prev, v);
  }
  return out;
}

/** One JSON line of pino turned into `<time> <LEVEL> <msg> key=value…` (the text format). */
export function textLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, msg, ...rest } = o;
  const when = typeof time === 'number' ? new Date(time).toISOString() : String(time);
  const name = typeof level === 'number' ? (pino.levels.labels[level] ?? String(level)) : String(level);
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${when} ${name.toUpperCase().padEnd(5)} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}\n`;
}

/** A JSON line at warn or above (pino writes `level` first: formatters.level below). */
const SERIOUS = /^\{"level":"(warn|error|fatal)"/;

/**
 * The logger. By default info and below go to stdout, batched (access-log.ts), and warnings and
 * errors to stderr at once (as the host's plain lines did); `logger.flush()` writes what waits.
 */
export function createLogger(o: LoggerOptions = {}): Logger {
  const format = o.format ?? 'json';
  const shape = format === 'text' ? textLine : (line: string) => line;
  let write: (line: string) => void;
  let flush: () => void;
  if (o.write) {
    const sink = o.write;
    write = (line) => sink(shape(line));
    flush = () => undefined;
  } else {
    const out = bufferedWriter((chunk) => process.stdout.write(chunk));
    // warnings and errors are rare and say what went wrong (a rollback at start, a crash): written
    // at once, so they are out before whatever comes next (the listening line, an exit)
    write = (line) => {
      if (SERIOUS.test(line)) process.stderr.write(shape(line));
      else out.write(shape(line));
    };
    flush = () => out.flush();
  }
  return pino(
    {
      level: o.level ?? 'info',
      base: undefined,
      // `level` as its name ("info"), which is what a jq filter over the log reads
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '***' },
      serializers: { token: tokenField },
    },
    {
      write,
      flush(cb?: () => void) {
        flush();
        cb?.();
      },
    } as pino.DestinationStream,
  );
}

/**
 * The logger for the request and command lines, whose fields are all the host's own (method,
 * path, a masked query, status, time, token id and name, addresses, route; a command's tool,
 * exit and audit note): the same sink, level and serializers without pino's redaction, which was
 * a tenth of the request path's CPU (a wildcard path walks every key of every line) and finds
 * nothing in such a line.
 */
export const requestLogger = (logger: Logger): Logger => logger.child({}, { redact: [] });

/** The `log(line)` areas and the host take, at one level of the logger. */
export const lineLogger =
  (logger: Logger, level: 'info' | 'warn' | 'error' = 'warn') =>
  (line: string): void =>
    logger[level](line);
