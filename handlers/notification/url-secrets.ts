/**
 * Credentials inside a webhook URL (`https://user:pass@host/p?token=…`) are secrets like the
 * agents' secret fields (issue 27 item 11): the userinfo (user and password) and every query value
 * (a query piece without `=` is a value too: `?<key>`). They are
 * - sealed part by part where they stand, so the stored URL keeps its shape and everything else in
 *   it stays readable: `https://enc%3Av1%3A…:enc%3Av1%3A…@host/p?token=enc%3Av1%3A…`;
 * - masked in every answer: `https://********:********@host/p?token=********`;
 * - opened by the host's sender only, for a send, back to the URL the client gave.
 * An update that sends a part back as the mask keeps the stored part at the same place (the same
 * userinfo field, the same query key and occurrence), as long as the URL's origin is unchanged.
 *
 * Parts are handled as they stand in the WHATWG-serialised URL (percent-encoded), so putting an
 * opened part back gives the same URL byte for byte. Pure; runs in every runtime (URL only).
 */
import { SECRET_MASK } from './mask';

export const SEALED_PREFIX = 'enc:v1:';

/** Where a secret sits in a URL: the userinfo fields, or the `index`th query value of `key`. */
export type UrlSecretPlace =
  { kind: 'username' } | { kind: 'password' } | { kind: 'query'; key: string | null; index: number };

const decode = (raw: string): string => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};

/** Whether a part (as it stands in a URL) is the mask, however it is encoded. */
export const isMaskPart = (raw: string): boolean => decode(raw) === SECRET_MASK;

/** Whether a part (as it stands in a URL) holds a sealed value. */
export const isSealedPart = (raw: string): boolean => decode(raw).startsWith(SEALED_PREFIX);

const placeKey = (p: UrlSecretPlace): string =>
  p.kind === 'query' ? `query:${p.key === null ? '' : `=${p.key}`}:${p.index}` : p.kind;

/**
 * The URL with each secret part replaced by `fn(part, place)` (a part as it stands in the URL, and
 * the answer put there as it is). `href` unchanged when it holds no secret part.
 */
export function mapUrlSecrets(href: string, fn: (raw: string, place: UrlSecretPlace) => string): string {
  let u: URL;
  try {
    u = new URL(href);
  } catch {
    return href; // not a URL: the schema says so
  }
  const search = u.search.length > 1 ? u.search.slice(1) : '';
  let parts = 0;
  const put = (raw: string, place: UrlSecretPlace) => {
    parts++;
    return fn(raw, place);
  };
  if (u.username !== '') u.username = put(u.username, { kind: 'username' });
  if (u.password !== '') u.password = put(u.password, { kind: 'password' });
  if (search !== '') {
    const seen = new Map<string, number>();
    u.search = `?${search
      .split('&')
      .map((piece) => {
        const eq = piece.indexOf('=');
        const key = eq < 0 ? null : piece.slice(0, eq);
        const value = eq < 0 ? piece : piece.slice(eq + 1);
        if (value === '') return piece;
        const id = key ?? '\0';
        const index = seen.get(id) ?? 0;
        seen.set(id, index + 1);
        const next = put(value, { kind: 'query', key, index });
        return key === null ? next : `${key}=${next}`;
      })
      .join('&')}`;
  }
  // a URL without credentials stays as the client wrote it
  return parts === 0 ? href : u.href;
}

/** The secret parts of a URL, each as it stands in it. */
export function urlSecretParts(href: string): { raw: string; place: UrlSecretPlace }[] {
  const out: { raw: string; place: UrlSecretPlace }[] = [];
  mapUrlSecrets(href, (raw, place) => {
    out.push({ raw, place });
    return raw;
  });
  return out;
}

/** What answers show: every secret part as the mask. */
export const maskUrl = (href: string): string => mapUrlSecrets(href, () => SECRET_MASK);

/** The URL with every part not sealed yet sealed (one call of `seal` for all of them). */
export async function sealUrl(href: string, seal: (values: string[]) => Promise<string[]>): Promise<string> {
  const open = urlSecretParts(href).filter((p) => !isSealedPart(p.raw));
  if (open.length === 0) return href;
  const sealed = await seal(open.map((p) => p.raw));
  const byPlace = new Map(open.map((p, i) => [placeKey(p.place), encodeURIComponent(sealed[i])]));
  return mapUrlSecrets(href, (raw, place) => byPlace.get(placeKey(place)) ?? raw);
}

/** `sealUrl` for a synchronous sealer (the host sealing rows stored before this existed). */
export function sealUrlSync(href: string, seal: (value: string) => string): string {
  return mapUrlSecrets(href, (raw) => (isSealedPart(raw) ? raw : encodeURIComponent(seal(raw))));
}

/** The URL to send to: every sealed part opened (host side only; `open` throws on a bad one). */
export const openUrl = (href: string, open: (sealed: string) => string): string =>
  mapUrlSecrets(href, (raw) => (isSealedPart(raw) ? open(decode(raw)) : raw));

/** A problem with a URL a client sent, for the schema: a secret part that is the mask or looks sealed. */
export function clientUrlProblem(href: string): string | undefined {
  for (const { raw } of urlSecretParts(href)) {
    if (isMaskPart(raw))
      return `holds the mask ${SECRET_MASK}, not a value: send the real credentials, or on update send back the URL the agent shows to keep them`;
    if (isSealedPart(raw)) return `must not hold a value starting with ${SEALED_PREFIX}`;
  }
  return undefined;
}

/**
 * The URL an update stores: each part the client sent as the mask takes the stored part at the
 * same place. Throws a message (for a 400 on `url`) when a masked part has no stored counterpart,
 * or when the origin changed (the stored credentials were given for that destination only).
 */
export function resolveMaskedUrl(incoming: string, stored: string | undefined): string {
  const masked = urlSecretParts(incoming).filter((p) => isMaskPart(p.raw));
  if (masked.length === 0) return incoming;
  if (stored === undefined) throw new UrlMaskError(`holds the mask ${SECRET_MASK} but the agent has no stored URL`);
  const from = new URL(stored).origin;
  const to = new URL(incoming).origin;
  if (from !== to)
    throw new UrlMaskError(
      `holds the mask ${SECRET_MASK} but its origin changed (${from} → ${to}): send the credentials for the new destination in clear`,
    );
  const kept = new Map(urlSecretParts(stored).map((p) => [placeKey(p.place), p.raw]));
  return mapUrlSecrets(incoming, (raw, place) => {
    if (!isMaskPart(raw)) return raw;
    const old = kept.get(placeKey(place));
    if (old === undefined)
      throw new UrlMaskError(`holds the mask ${SECRET_MASK} where the stored URL has no value: send the real one`);
    return old;
  });
}

export class UrlMaskError extends Error {}

/** The decoded secret values of a URL (to redact them from error messages). */
export const urlSecretValues = (href: string): string[] =>
  urlSecretParts(href).flatMap(({ raw }) => (decode(raw) === raw ? [raw] : [raw, decode(raw)]));
