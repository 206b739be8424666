/**
 * Parsers for MIT klist output (src/clients/klist/klist.c, krb5 1.20):
 *   parseKlist        `klist [-f] [-e]`             ticket cache
 *   parseKeytabList   `klist -k [-t] [-e] KEYTAB`   keytab entries
 *   parseKlistCollection `klist -l`                 caches of a collection
 *
 * Run klist with LC_ALL=C and TZ=UTC. Under the C locale klist prints times as
 * `MM/DD/YY HH:MM:SS` (strftime `%x %X`, the first of its formats that fits 19 characters) and
 * the times are the box's local time with no zone. These parsers read them as UTC: correct when
 * TZ=UTC is passed, and on the appliance, whose zone is UTC. `MM/DD/YYYY HH:MM:SS` (what
 * `%x %T` gives in en_US) is accepted too. Two-digit years follow POSIX strptime `%y`:
 * 69-99 → 1969-1999, 00-68 → 2000-2068.
 *
 * Input that is not klist output throws ParseError naming the line. The message never repeats
 * the line itself: `klist -K` would print key bytes.
 *
 * The output schemas below are not used to parse (the formats are line oriented and need line
 * numbers in errors): they document the contract, give routes their answer schemas, and let
 * tests check that a parse really has the declared shape. Timestamps are emitted as
 * `YYYY-MM-DDTHH:MM:SSZ`, second precision, because klist prints no more than that.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

/** `2026-11-25T21:20:23Z` */
const isoSeconds = z.iso.datetime({ precision: 0 });

// ---------------------------------------------------------------------------------------------
// klist (ticket cache)

export const klistTicket = z.object({
  /** Service principal, e.g. `krbtgt/EXAMPLE.TEST@EXAMPLE.TEST`. */
  service: z.string().min(1),
  /** "Valid starting" column. */
  start: isoSeconds,
  expires: isoSeconds,
  /** Present when the ticket is renewable (`renew until …`). */
  renewUntil: isoSeconds.optional(),
  /**
   * Flag letters exactly as `klist -f` prints them, e.g. `FRIA`; see KLIST_FLAG_LETTERS.
   * Absent when klist ran without `-f` or printed no flags.
   */
  flags: z
    .string()
    .regex(/^[A-Za-z]+$/)
    .optional(),
  /** Only when the ticket's client differs from the cache's default principal (`for client …`). */
  client: z.string().min(1).optional(),
  /** With `klist -e`: `Etype (skey, tkt): <session key>, <ticket>`. */
  etypes: z.object({ sessionKey: z.string().min(1), ticket: z.string().min(1) }).optional(),
});
export type KlistTicket = z.infer<typeof klistTicket>;

export const klist = z.object({
  /** `TYPE:residual`, e.g. `FILE:/tmp/krb5cc_0`, `KEYRING:persistent:0:0`, `KCM:0`, `DIR::/run/x/tkt`. */
  cache: z.string().min(1),
  defaultPrincipal: z.string().min(1),
  tickets: z.array(klistTicket),
});
export type Klist = z.infer<typeof klist>;

/** Letters of `klist -f` (klist.c flags_string) and the ticket flag each one stands for. */
export const KLIST_FLAG_LETTERS: Readonly<Record<string, string>> = {
  F: 'forwardable',
  f: 'forwarded',
  P: 'proxiable',
  p: 'proxy',
  D: 'may-postdate',
  d: 'postdated',
  i: 'invalid',
  R: 'renewable',
  I: 'initial',
  H: 'hw-authent',
  A: 'pre-authent',
  T: 'transit-policy-checked',
  O: 'ok-as-delegate',
  a: 'anonymous',
};

// ---------------------------------------------------------------------------------------------
// klist -l (cache collection)

export const klistCacheEntry = z.object({
  /**
   * klist -l prints the principal in a 30-character column and cuts longer names
   * (`host/nas01.example.test@EXAMPL`). `principalTruncated` says the column was full, so the
   * name may be cut; use `klist -c <cache>` for the full name.
   */
  principal: z.string().min(1),
  principalTruncated: z.boolean(),
  cache: z.string().min(1),
  expired: z.boolean(),
});
export const klistCollection = z.object({ caches: z.array(klistCacheEntry) });
export type KlistCollection = z.infer<typeof klistCollection>;

// ---------------------------------------------------------------------------------------------
// klist -k [-t] [-e] (keytab)

export const keytabKey = z.object({
  kvno: z.number().int().nonnegative(),
  /** With `-t`. */
  timestamp: isoSeconds.optional(),
  principal: z.string().min(1),
  /** With `-e`, e.g. `aes256-cts-hmac-sha1-96`, `DEPRECATED:arcfour-hmac`, `etype 99`. */
  enctype: z.string().min(1).optional(),
});
export const keytabList = z.object({
  /** `FILE:/etc/krb5.keytab` */
  keytab: z.string().min(1),
  keys: z.array(keytabKey),
});
export type KeytabList = z.infer<typeof keytabList>;

const TS = String.raw`\d{2}/\d{2}/(?:\d{2}|\d{4}) \d{2}:\d{2}:\d{2}`;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Answers of klistTimeToIso by text: a ticket list shows the same few times at every call (the
 * conversion was a tenth of a ticket-list request's CPU). Bounded: emptied when full.
 */
const isoOfKlistTime = new Map<string, string>();
const ISO_CACHE_SIZE = 512;

/** `MM/DD/YY HH:MM:SS` or `MM/DD/YYYY HH:MM:SS` (read as UTC) → `YYYY-MM-DDTHH:MM:SSZ`. */
export function klistTimeToIso(s: string, parser = 'klist', line?: number): string {
  const known = isoOfKlistTime.get(s);
  if (known !== undefined) return known;
  const iso = convertKlistTime(s, parser, line);
  if (isoOfKlistTime.size >= ISO_CACHE_SIZE) isoOfKlistTime.clear();
  isoOfKlistTime.set(s, iso);
  return iso;
}

function convertKlistTime(s: string, parser: string, line: number | undefined): string {
  const m = /^(\d{2})\/(\d{2})\/(\d{2}|\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(s);
  if (!m) throw new ParseError(parser, 'timestamp is not MM/DD/YY HH:MM:SS (run klist with LC_ALL=C)', line);
  const [mo, d, yRaw, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  const y = m[3].length === 4 ? yRaw : yRaw >= 69 ? 1900 + yRaw : 2000 + yRaw;
  const ms = Date.UTC(y, mo - 1, d, h, mi, se);
  const date = new Date(ms);
  // Date.UTC rolls 02/30 over into March; a real klist never prints such a date.
  if (
    date.getUTCFullYear() !== y ||
    date.getUTCMonth() !== mo - 1 ||
    date.getUTCDate() !== d ||
    date.getUTCHours() !== h ||
    date.getUTCMinutes() !== mi ||
    date.getUTCSeconds() !== se
  ) {
    throw new ParseError(parser, 'timestamp out of range', line);
  }
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

// Fields of the TAB-indented lines under a ticket (klist.c show_credential). They are joined by
// ", " and wrap after "renew until" + "Flags", so they are read as a token stream, not split on
// commas: the Etype field itself contains ", ".
const NEXT_FIELD = String.raw`(?=, (?:renew until |Flags: |Etype \(|AD types: |Addresses: )|$)`;
const FIELD_RES: { name: 'client' | 'renew' | 'flags' | 'etype'; re: RegExp }[] = [
  { name: 'client', re: new RegExp(String.raw`for client (\S(?:.*?\S)?)${NEXT_FIELD}`, 'y') },
  { name: 'renew', re: new RegExp(String.raw`renew until (${TS})${NEXT_FIELD}`, 'y') },
  { name: 'flags', re: new RegExp(String.raw`Flags: ([A-Za-z]+)${NEXT_FIELD}`, 'y') },
  // etype_string() gives a name, `DEPRECATED:name`, or `etype <n>`; each is followed by a space.
  { name: 'etype', re: new RegExp(String.raw`Etype \(skey, tkt\): ([^,]+), ([^,]+?) ${NEXT_FIELD}`, 'y') },
];

function parseExtraLine(body: string, t: KlistTicket, lineNo: number): void {
  let pos = 0;
  while (pos < body.length) {
    let matched = false;
    for (const { name, re } of FIELD_RES) {
      re.lastIndex = pos;
      const m = re.exec(body);
      if (!m) continue;
      const already =
        (name === 'client' && t.client !== undefined) ||
        (name === 'renew' && t.renewUntil !== undefined) ||
        (name === 'flags' && t.flags !== undefined) ||
        (name === 'etype' && t.etypes !== undefined);
      if (already) throw new ParseError('klist', `repeated ${name} field`, lineNo);
      if (name === 'client') t.client = m[1];
      else if (name === 'renew') t.renewUntil = klistTimeToIso(m[1], 'klist', lineNo);
      else if (name === 'flags') t.flags = m[1];
      else t.etypes = { sessionKey: m[1], ticket: m[2] };
      pos = re.lastIndex;
      matched = true;
      break;
    }
    if (!matched) {
      throw new ParseError(
        'klist',
        'unknown ticket detail (expected for client / renew until / Flags / Etype; -a and -d output is not supported)',
        lineNo,
      );
    }
    if (pos < body.length) {
      if (!body.startsWith(', ', pos)) throw new ParseError('klist', "expected ', ' between ticket details", lineNo);
      pos += 2;
    }
  }
}

/** `klist [-f] [-e]` (LC_ALL=C, TZ=UTC) → cache, default principal and tickets. */
export function parseKlist(text: string): Klist {
  const P = 'klist';
  const lines = splitLines(text);
  const cacheM = /^Ticket cache: (\S.*)$/.exec(lines[0] ?? '');
  if (!cacheM)
    throw new ParseError(P, "expected 'Ticket cache: TYPE:NAME' (empty output: see stderr and exit code)", 1);
  const princM = /^Default principal: (\S.*)$/.exec(lines[1] ?? '');
  if (!princM) throw new ParseError(P, "expected 'Default principal: NAME'", 2);
  if (lines[2] !== '') throw new ParseError(P, 'expected an empty line after the default principal', 3);
  if (!/^Valid starting {2,}Expires {2,}Service principal$/.test(lines[3] ?? '')) {
    throw new ParseError(P, "expected the 'Valid starting  Expires  Service principal' header", 4);
  }

  const ticketRe = new RegExp(`^(${TS}) {2,}(${TS}) {2,}(\\S.*)$`);
  const tickets: KlistTicket[] = [];
  for (let i = 4; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i];
    if (line.startsWith('\t')) {
      const t = tickets[tickets.length - 1];
      if (!t) throw new ParseError(P, 'ticket detail line before any ticket', lineNo);
      parseExtraLine(line.slice(1), t, lineNo);
      continue;
    }
    const m = ticketRe.exec(line);
    if (!m)
      throw new ParseError(
        P,
        'expected a ticket line: START  EXPIRES  SERVICE (or a TAB-indented detail line)',
        lineNo,
      );
    tickets.push({ service: m[3], start: klistTimeToIso(m[1], P, lineNo), expires: klistTimeToIso(m[2], P, lineNo) });
  }
  return { cache: cacheM[1], defaultPrincipal: princM[1], tickets };
}

/** `klist -k [-t] [-e] KEYTAB` (LC_ALL=C, TZ=UTC) → keytab name and one entry per key. */
export function parseKeytabList(text: string): KeytabList {
  const P = 'klist -k';
  const lines = splitLines(text);
  const nameM = /^Keytab name: (\S.*)$/.exec(lines[0] ?? '');
  if (!nameM) throw new ParseError(P, "expected 'Keytab name: TYPE:NAME'", 1);
  if (lines.length === 1) {
    // What klist prints on stdout when the keytab is missing or unreadable; the reason is on stderr.
    throw new ParseError(P, 'output ends after the keytab name (keytab missing or unreadable: see stderr)', 2);
  }
  const header = lines[1];
  let withTime: boolean;
  if (/^KVNO Timestamp {2,}Principal$/.test(header)) withTime = true;
  else if (header === 'KVNO Principal') withTime = false;
  else throw new ParseError(P, "expected the 'KVNO [Timestamp] Principal' header", 2);
  if (!(withTime ? /^-{4} -+ -+$/ : /^-{4} -+$/).test(lines[2] ?? '')) {
    throw new ParseError(P, 'expected the dashed rule under the header', 3);
  }

  const entryRe = withTime ? new RegExp(`^ *(\\d+) (${TS}) (\\S.*)$`) : /^ *(\d+) (\S.*)$/;
  const keys: KeytabList['keys'] = [];
  for (let i = 3; i < lines.length; i++) {
    const lineNo = i + 1;
    const m = entryRe.exec(lines[i]);
    if (!m) throw new ParseError(P, `expected 'KVNO ${withTime ? 'TIMESTAMP ' : ''}PRINCIPAL [(ENCTYPE)]'`, lineNo);
    let rest = withTime ? m[3] : m[2];
    // `klist -K` appends the key as ` (0x…)`: refuse rather than carry key material around.
    if (/\(0x[0-9a-fA-F]*\)/.test(rest)) throw new ParseError(P, 'key contents present (klist -K): refused', lineNo);
    let enctype: string | undefined;
    // -e appends " (ENCTYPE) " — note the trailing space, which a principal never has.
    const e = /^(.*\S) \(([^()]+)\) $/.exec(rest);
    if (e) {
      rest = e[1];
      enctype = e[2];
    } else if (rest.endsWith(' ')) {
      throw new ParseError(P, 'trailing space without an (ENCTYPE)', lineNo);
    }
    keys.push({
      kvno: Number(m[1]),
      ...(withTime ? { timestamp: klistTimeToIso(m[2], P, lineNo) } : {}),
      principal: rest,
      ...(enctype !== undefined ? { enctype } : {}),
    });
  }
  return { keytab: nameM[1], keys };
}

/**
 * `klist -l`: one row per cache of the collection. The principal column is `%-30.30s`, so
 * longer principals are cut at 30 characters (flagged as `principalTruncated`); an expired
 * cache ends with ` (Expired)`.
 */
export function parseKlistCollection(text: string): KlistCollection {
  const P = 'klist -l';
  const lines = splitLines(text);
  if (!/^Principal name {2,}Cache name$/.test(lines[0] ?? ''))
    throw new ParseError(P, "expected the 'Principal name  Cache name' header", 1);
  if (!/^-{14} {2,}-{10}$/.test(lines[1] ?? ''))
    throw new ParseError(P, 'expected the dashed rule under the header', 2);
  const caches: KlistCollection['caches'] = [];
  for (let i = 2; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i];
    if (line.length < 32 || line[30] !== ' ' || line[0] === ' ') {
      throw new ParseError(P, 'expected a 30-character principal column, a space and a cache name', lineNo);
    }
    const principal = line.slice(0, 30).trimEnd();
    let cache = line.slice(31);
    const expired = cache.endsWith(' (Expired)');
    if (expired) cache = cache.slice(0, -' (Expired)'.length);
    if (cache === '' || cache.startsWith(' ')) throw new ParseError(P, 'missing cache name', lineNo);
    caches.push({ principal, principalTruncated: principal.length === 30, cache, expired });
  }
  return { caches };
}
