/** What the Kerberos routes answer: the raw tool output or file beside its parse. */
import * as z from 'zod';
import { keytabList, klist } from './parse/klist';
import { krb5Conf } from './parse/krb5-conf';

export const messageAnswer = z.object({ message: z.string() });

/** GET /kerberos/ticket/list: the spec's `raw`, and the parse of it beside it. */
export const ticketListAnswer = z.object({ raw: z.string(), json: klist });
export type TicketListAnswer = z.output<typeof ticketListAnswer>;

export const keyListAnswer = z.object({ raw: z.string(), json: keytabList });
export type KeyListAnswer = z.output<typeof keyListAnswer>;

/** GET /kerberos/conf: the global krb5.conf, raw and parsed. */
export const confAnswer = z.object({ raw: z.string(), json: krb5Conf });

/**
 * One realm file as listed and detailed. `json` is null and `error` says why when the file does
 * not parse: a broken file must stay visible (and fixable through update), not hide the others.
 */
export const realmFile = z.object({
  raw: z.string(),
  json: krb5Conf.nullable(),
  error: z.string().optional(),
});
export type RealmFile = z.infer<typeof realmFile>;
export const realmListAnswer = z.record(z.string(), realmFile);
