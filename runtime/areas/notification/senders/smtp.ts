import type { SmtpConfig } from '../../../../handlers/notification/contract';
import { mailTextOf, subjectOf, type Notification } from '../payload';
import { SendError } from '../send-error';
import type { SendContext } from './context';
import { importModule } from '../../../launcher-bridge';

/**
 * One mail through the agent's SMTP server. `secure` (or its legacy name `ssl`) is TLS from the
 * first byte; `requireTLS` refuses to go on unless STARTTLS upgrades a plain connection; with
 * neither, STARTTLS is still used when offered. Certificates are always verified.
 */
export async function sendMail(cfg: SmtpConfig, n: Notification, ctx: SendContext): Promise<void> {
  const port = Number(cfg.port);
  // Loaded on first mail: nodemailer is large and most hosts start without an SMTP agent.
  const { createTransport } = await importModule<typeof import('nodemailer')>('nodemailer');
  const transport = createTransport({
    host: cfg.host,
    port,
    secure: cfg.secure ?? cfg.ssl ?? false,
    requireTLS: cfg.requireTLS ?? false,
    auth: { user: cfg.username, pass: cfg.password },
    connectionTimeout: ctx.settings.timeoutMs,
    greetingTimeout: ctx.settings.timeoutMs,
    socketTimeout: ctx.settings.timeoutMs,
    tls: ctx.ca ? { ca: ctx.ca } : {},
    disableFileAccess: true,
    disableUrlAccess: true,
    // nodemailer's logger would print the AUTH exchange; keep it off.
    logger: false,
    debug: false,
  });
  try {
    await transport.sendMail({
      from: cfg.from,
      to: cfg.to,
      subject: subjectOf(n, ctx.productName),
      text: mailTextOf(n, ctx.productName),
      headers: {
        'X-Ballast-Event-Id': n.id,
        'X-Ballast-Event-Type': n.type,
        ...(n.sequence === undefined ? {} : { 'X-Ballast-Event-Sequence': String(n.sequence) }),
      },
    });
  } catch (e) {
    throw new SendError(`SMTP ${cfg.host}:${port}: ${(e as Error)?.message ?? String(e)}`);
  } finally {
    transport.close();
  }
}
