import { createHmac, timingSafeEqual } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { privateDir } from './tmp';

/**
 * Real local peers for the notification system tests, all on 127.0.0.1: an SMTP server that
 * checks credentials and records each message, a webhook receiver that verifies Standard
 * Webhooks signatures on its own (not with the host's signer), and a Twilio-shaped HTTP stand-in.
 */

/* ---------------- TLS ---------------- */

export interface TestCert {
  key: string;
  cert: string;
  certPath: string;
}

/** A self-signed certificate for 127.0.0.1 (openssl, as the host tests do). */
export function makeCert(): TestCert {
  const dir = privateDir('ballast-notify-cert');
  execFileSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    certPath: join(dir, 'cert.pem'),
  };
}

/* ---------------- SMTP ---------------- */

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The authenticated user. */
  user: string | undefined;
  /** Whether the connection was TLS when the message came (implicit TLS or after STARTTLS). */
  secure: boolean;
  headers: Record<string, string>;
  subject: string;
  text: string;
}

export interface SmtpPeer {
  port: number;
  mails: ReceivedMail[];
  /** Failed AUTH attempts (user names only). */
  refusedLogins: string[];
  /** Connection errors the server saw (e.g. a client that refused the certificate). */
  errors: string[];
  close(): Promise<void>;
}

/**
 * `plain`: no TLS at all (AUTH allowed in clear); `starttls`: offers STARTTLS and only allows
 * AUTH after it; `implicit`: TLS from the first byte.
 */
export async function startSmtp(o: {
  mode: 'plain' | 'starttls' | 'implicit';
  users: Record<string, string>;
  tls?: TestCert;
}): Promise<SmtpPeer> {
  const mails: ReceivedMail[] = [];
  const refusedLogins: string[] = [];
  const errors: string[] = [];
  const options: SMTPServerOptions = {
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    secure: o.mode === 'implicit',
    allowInsecureAuth: o.mode === 'plain',
    disabledCommands: o.mode === 'plain' ? ['STARTTLS'] : [],
    key: o.tls?.key,
    cert: o.tls?.cert,
    onAuth(auth, _session, cb) {
      if (
        auth.username !== undefined &&
        o.users[auth.username] !== undefined &&
        o.users[auth.username] === auth.password
      )
        return cb(null, { user: auth.username });
      refusedLogins.push(auth.username ?? '');
      return cb(new Error('Authentication credentials invalid'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const { headers, text } = parseMessage(Buffer.concat(chunks).toString('utf8'));
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
          headers,
          subject: headers.subject ?? '',
          text,
        });
        cb();
      });
    },
  };
  const server = new SMTPServer(options);
  // A client that refuses our certificate hangs up mid-handshake: expected in the TLS tests.
  server.on('error', (e: Error) => errors.push(e.message));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return { port, mails, refusedLogins, errors, close: () => new Promise((r) => server.close(() => r())) };
}

/** Just enough MIME for nodemailer's single-part text mails: headers, QP/base64 body. */
function parseMessage(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.slice(split + 4);
  const cte = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (cte === 'quoted-printable') {
    body = Buffer.from(
      body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  } else if (cte === 'base64') body = Buffer.from(body, 'base64').toString('utf8');
  return { headers, text: body.replace(/\r\n/g, '\n') };
}

/* ---------------- webhooks ---------------- */

export interface WebhookRequest {
  path: string;
  /** The request target as sent: path and query. */
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; sequence?: number; type: string; timestamp: string; host: string; data: Record<string, unknown> };
  /** Standard Webhooks verification with the path's secret; null when the path has none. */
  verified: boolean | null;
  /**
   * The status of the answer once it was handed to the network (so the sender may have it);
   * undefined while held, or when the connection was closed before an answer went out.
   */
  answered?: number;
}

/**
 * What the receiver answers: a status, a status with its own reason phrase and body (what a
 * hostile or chatty receiver sends back), or 'hold' to keep the request open until release().
 */
export type Reply = number | { status: number; reason: string; body: string } | 'hold';

function answer(res: ServerResponse, reply: Exclude<Reply, 'hold'>): void {
  if (typeof reply === 'number') res.writeHead(reply).end();
  else res.writeHead(reply.status, reply.reason, { 'content-type': 'text/plain' }).end(reply.body);
}

export class WebhookReceiver {
  readonly requests: WebhookRequest[] = [];
  /** Per path: the answers for successive requests; the last one repeats. Default 204. */
  readonly replies = new Map<string, Reply[]>();
  private server: Server | undefined;
  private readonly held: ServerResponse[] = [];

  constructor(
    /** Per path: the whsec_ secret the receiver verifies with. */
    private readonly secrets: Record<string, string> = {},
    /** Answer each request this much later (a slow destination), in ms. */
    private readonly delayMs = 0,
  ) {}

  /** Listens on `port` (0: any free one); answers the port. */
  async start(port = 0): Promise<number> {
    const server = createHttpServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return (server.address() as { port: number }).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server!.address() as { port: number }).port}${path}`;
  }

  on(path: string): WebhookRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  get holding(): number {
    return this.held.length;
  }

  release(status = 204): void {
    for (const res of this.held.splice(0)) res.writeHead(status).end();
  }

  async stop(): Promise<void> {
    this.release(503);
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = Buffer.concat(chunks).toString('utf8');
      const secret = this.secrets[path];
      const request: WebhookRequest = {
        path,
        target: req.url ?? '',
        headers: req.headers,
        body,
        json: JSON.parse(body),
        verified: secret ? verifyStandardWebhook(secret, req.headers, body) : null,
      };
      this.requests.push(request);
      res.on('finish', () => (request.answered = res.statusCode));
      const queue = this.replies.get(path) ?? [204];
      const reply = queue.length > 1 ? queue.shift()! : queue[0];
      if (reply === 'hold') this.held.push(res);
      else if (this.delayMs > 0) {
        // a slow destination, not a wait of the test's: stop() may close the connection first
        setTimeout(() => {
          if (!req.socket.destroyed) answer(res, reply);
        }, this.delayMs);
      } else answer(res, reply);
    });
  }
}

/** The Standard Webhooks reference verification: v1 HMAC-SHA256, constant time, ±5 min. */
export function verifyStandardWebhook(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sigs !== 'string') return false;
  if (!/^\d+$/.test(ts) || Math.abs(nowSeconds - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest();
  return sigs.split(' ').some((entry) => {
    const [version, b64] = entry.split(',');
    if (version !== 'v1' || !b64) return false;
    const got = Buffer.from(b64, 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/* ---------------- Twilio ---------------- */

export interface Sms {
  to: string;
  from: string;
  body: string;
}

export interface TwilioPeer {
  url: string;
  messages: Sms[];
  refused: number;
  close(): Promise<void>;
}

/** POST /2010-04-01/Accounts/{sid}/Messages.json with Basic sid:token, answered like Twilio. */
export async function startTwilio(accountSid: string, authToken: string): Promise<TwilioPeer> {
  const peer: TwilioPeer = { url: '', messages: [], refused: 0, close: async () => undefined };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m)
        return json(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      if (m[1] !== accountSid || req.headers.authorization !== expected) {
        peer.refused++;
        return json(401, {
          code: 20003,
          message: 'Authenticate',
          more_info: 'https://www.twilio.com/docs/errors/20003',
          status: 401,
        });
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const sms = { to: form.get('To') ?? '', from: form.get('From') ?? '', body: form.get('Body') ?? '' };
      if (!sms.to || !sms.from || !sms.body)
        return json(400, { code: 21604, message: "A 'To' phone number is required.", status: 400 });
      peer.messages.push(sms);
      const sid = `SM${String(peer.messages.length).padStart(32, '0')}`;
      json(201, {
        sid,
        account_sid: accountSid,
        to: sms.to,
        from: sms.from,
        body: sms.body,
        status: 'queued',
        num_segments: '1',
        num_media: '0',
        direction: 'outbound-api',
        api_version: '2010-04-01',
        price: null,
        error_code: null,
        error_message: null,
        date_created: new Date().toUTCString(),
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  peer.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  peer.close = () => new Promise((r) => server.close(() => r()));
  return peer;
}

/* ---------------- small waits ---------------- */

export async function waitFor<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port on 127.0.0.1 that was free a moment ago (for a peer that starts later, or never). */
export async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}
