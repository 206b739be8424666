/**
 * Shapes of what the Kerberos parsers return. The parsers are written by hand (the formats are
 * line oriented and need line numbers in errors), so these schemas are not used to parse text:
 * they document the contract, give routes their response schemas, and let tests check that a
 * parser's output really has the declared shape.
 *
 * Timestamps: klist prints local time of the box with no zone. The product runs klist with
 * `LC_ALL=C` and `TZ=UTC` (and the appliance's zone is UTC anyway), so the parsers read the
 * printed time as UTC and emit `YYYY-MM-DDTHH:MM:SSZ`. Second precision, no milliseconds,
 * because klist prints no more than that.
 */
import * as z from 'zod';

/** `2026-11-25T21:20:23Z` */
const IsoSeconds = z.iso.datetime({ precision: 0 });

// ---------------------------------------------------------------------------------------------
// klist (ticket cache)

export const klistTicket = z.object({
  /** Service principal, e.g. `krbtgt/EXAMPLE.TEST@EXAMPLE.TEST`. */
  service: z.string().min(1),
  /** "Valid starting" column. */
  start: IsoSeconds,
  expires: IsoSeconds,
  /** Present when the ticket is renewable (`renew until …`). */
  renewUntil: IsoSeconds.optional(),
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

export const klistOutput = z.object({
  /** `TYPE:residual`, e.g. `FILE:/tmp/krb5cc_0`, `KEYRING:persistent:0:0`, `KCM:0`, `DIR::/run/x/tkt`. */
  cache: z.string().min(1),
  defaultPrincipal: z.string().min(1),
  tickets: z.array(klistTicket),
});
export type Klist = z.infer<typeof klistOutput>;

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
  timestamp: IsoSeconds.optional(),
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

// ---------------------------------------------------------------------------------------------
// Error messages of the MIT tools (stderr)

export const KRB5_ERROR_KINDS = [
  'no-credentials-cache',
  'keytab-not-found',
  'keytab-no-suitable-keys',
  'keytab-invalid',
  'password-incorrect',
  'preauthentication-failed',
  'client-not-found',
  'client-revoked',
  'client-expired',
  'password-expired',
  'cannot-read-password',
  'kdc-unreachable',
  'realm-unknown',
  'clock-skew',
  'config-invalid',
  'unknown',
] as const;
export const krb5ErrorKind = z.enum(KRB5_ERROR_KINDS);

export const krb5Error = z.object({
  /** Program that printed it (`kinit`, `klist`, `kvno`, …). */
  tool: z.string().min(1),
  kind: krb5ErrorKind,
  /** The message without the `tool: ` prefix and without the ` while …` tail. */
  message: z.string().min(1),
  /** The ` while …` tail: `getting initial credentials`, `starting keytab scan`, … */
  during: z.string().min(1).optional(),
  /** What the message names: a principal, realm, keytab path or cache name (see parse/krb5-error.ts). */
  subject: z.string().min(1).optional(),
});
export type Krb5Error = z.infer<typeof krb5Error>;

// ---------------------------------------------------------------------------------------------
// krb5.conf (and krb5.conf.d/*.conf realm files)
//
// Shape (see parse/krb5-conf.ts for the grammar and render/krb5-conf.ts for the way back):
//   {
//     directives: [{ type: 'includedir', path: '/etc/krb5.conf.d/' }, …],
//     sections: { libdefaults: { default_realm: 'EXAMPLE.TEST' },
//                 realms: { 'EXAMPLE.TEST': { kdc: ['kdc1:88', 'kdc2'], admin_server: 'kdc1' } } },
//     finals: [['realms', 'EXAMPLE.TEST']],
//   }
// - A tag seen once is a string; a tag seen several times is an array in file order; a
//   subsection (`tag = { … }`) is an object. Subsections with the same tag are merged, as MIT's
//   profile library merges them. A tag with both values and a subsection is an array holding
//   the strings and the one object.
// - Tags that MIT documents as lists are always arrays, even with one value, so a client can rely
//   on `realms.<R>.kdc` being an array: see KRB5_LIST_TAGS.
// - `finals` lists the paths carrying MIT's final marker (`[sect]*`, `tag* = {`, `}*`, `tag* = v`),
//   sorted, without duplicates. It is a set; order carries no meaning.
// - `directives`: `include`/`includedir` (any place in the file, column 1) and `module` (before
//   the first section). `section` names the top-level section the directive appeared in; absent
//   means before the first section. Rendering puts a directive at the end of its section.
// - Comments and layout are not kept; routes keep the raw text next to the JSON for that.

export type Krb5Value = string | Krb5Section;
export type Krb5Entry = Krb5Value | Krb5Value[];
export interface Krb5Section {
  [tag: string]: Krb5Entry;
}

export const krb5Section: z.ZodType<Krb5Section> = z.lazy(() =>
  z.record(z.string(), z.union([z.string(), krb5Section, z.array(z.union([z.string(), krb5Section]))])),
);

// Strict: a client's `{type: 'module', …, section}` must be refused, not silently trimmed.
export const krb5Directive = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('include'), path: z.string().min(1), section: z.string().min(1).optional() }),
  z.strictObject({ type: z.literal('includedir'), path: z.string().min(1), section: z.string().min(1).optional() }),
  /** `module PATH:RESIDUAL`: MIT then loads the profile from that module and ignores the file's relations. */
  z.strictObject({ type: z.literal('module'), path: z.string().min(1), residual: z.string() }),
]);
export type Krb5Directive = z.infer<typeof krb5Directive>;

export const krb5Conf = z.object({
  directives: z.array(krb5Directive),
  sections: z.record(z.string(), krb5Section),
  finals: z.array(z.array(z.string()).min(1)),
});
export type Krb5Conf = z.infer<typeof krb5Conf>;

/**
 * What a client may send for a realm file: either the full Krb5Conf shape, or just the sections
 * at top level (`{ realms: {…}, domain_realm: {…} }`). An object counts as the full shape when
 * it has `sections` and no keys besides `directives`, `sections` and `finals`; so a file cannot
 * be given in the short shape if its only section is called `sections` (krb5.conf has none).
 */
export type Krb5ConfInput =
  | { directives?: Krb5Directive[]; sections: Record<string, Krb5Section>; finals?: string[][] }
  | Record<string, Krb5Section>;

/**
 * Tags that hold a list, by position `realms.<REALM>.<tag>` and `plugins.<interface>.<tag>`; the
 * parser always makes these arrays. From MIT's krb5_conf.rst / pkinit docs: `kdc` (one line per
 * KDC), `master_kdc` / `primary_kdc` ("the primary KDC(s)"), `auth_to_local` (rules tried in
 * order), `http_anchors` and the `pkinit_*` locations ("may be specified multiple times"), and
 * plugin `module` / `enable_only` / `disable` ("may have multiple values"). `kpasswd_server` is
 * not called a list there, but the library locates it like `kdc`, trying every value.
 * `admin_server` is single-valued (kadmin uses the first).
 */
export const KRB5_LIST_TAGS: Readonly<Record<string, readonly string[]>> = {
  realms: [
    'kdc',
    'master_kdc',
    'primary_kdc',
    'kpasswd_server',
    'auth_to_local',
    'http_anchors',
    'pkinit_anchors',
    'pkinit_pool',
    'pkinit_revoke',
    'pkinit_identities',
  ],
  plugins: ['module', 'enable_only', 'disable'],
};

export const messageAnswer = z.object({ message: z.string() });

/** GET /kerberos/ticket/list: the spec's `raw`, and the parse of it beside it. */
export const ticketListAnswer = z.object({ raw: z.string(), json: klistOutput });

export const keyListAnswer = z.object({ raw: z.string(), json: keytabList });

/**
 * One realm file as listed and detailed. `json` is null and `error` says why when the file does
 * not parse: a broken file must stay visible (and fixable through update), not hide the others.
 */
export const realmFileAnswer = z.object({
  raw: z.string(),
  json: krb5Conf.nullable(),
  error: z.string().optional(),
});
export type RealmFile = z.infer<typeof realmFileAnswer>;
export const realmListAnswer = z.record(z.string(), realmFileAnswer);
