/**
 * tc's value notations, shared by the parsers, the plan and the reconciler.
 *
 * Handles and class ids are HEX in tc on both input and output: `classid 1:10` is minor 0x10,
 * and `default 30` is class 0x30. Rates and sizes are printed by tc's print_rate/print_size,
 * which round for display; the helpers here mirror that rounding so a comparison between what
 * we asked for and what tc shows is exact rather than "close enough".
 */

export interface TcHandle {
  major: number;
  minor: number;
}

/**
 * "1:", "1:a", ":4", "ffff:fff1", "0:" -> numbers (hex, as tc means them). Returns null for
 * anything else, so callers can report the line.
 */
export function parseTcHandle(text: string): TcHandle | null {
  const m = /^([0-9a-fA-F]{0,4}):([0-9a-fA-F]{0,4})$/.exec(text);
  if (!m) return null;
  return { major: m[1] ? parseInt(m[1], 16) : 0, minor: m[2] ? parseInt(m[2], 16) : 0 };
}

/** The text tc prints for a class id: minor in lower-case hex without padding ("1:a"). */
export function formatClassId(major: number, minor: number): string {
  return `${major.toString(16)}:${minor.toString(16)}`;
}

const RATE_UNITS: Record<string, number> = { '': 0, K: 1, M: 2, G: 3, T: 4 };

/**
 * tc's display of a rate ("8Mbit", "500Kbit", "12345Kbit", "8Mibit" with -iec) -> bits/s.
 * Returns null when the text is not a rate.
 */
export function parseTcRate(text: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)([KMGT]?)(i?)bit$/.exec(text);
  if (!m) return null;
  const base = m[3] ? 1024 : 1000;
  return Math.round(Number(m[1]) * base ** RATE_UNITS[m[2]!]!);
}

/**
 * What `tc class show` prints for a class configured with `bitsPerSec` (non-IEC), as bits/s.
 * Mirrors iproute2's print_rate: divide by 1000 while the value is >= 1000 and either divides
 * evenly or is still >= 1e6, truncating. E.g. 12345678 -> "12345Kbit" -> 12345000.
 */
export function tcShownRate(bitsPerSec: number): number {
  let rate = bitsPerSec;
  let scale = 1;
  for (let i = 0; i < 4; i++) {
    if (rate < 1000) break;
    if (rate % 1000 !== 0 && rate < 1000 * 1000) break;
    rate = Math.floor(rate / 1000);
    scale *= 1000;
  }
  return rate * scale;
}

/**
 * tc's display of a size ("1600b", "15Kb", "1Mb") -> bytes. tc's print_size uses 1024 and
 * rounds to the nearest KiB/MiB when within 16 bytes / 1 KiB, so "15Kb" means about 15360.
 */
export function parseTcSize(text: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)(b|Kb|Mb|Gb)$/.exec(text);
  if (!m) return null;
  const mult = m[2] === 'b' ? 1 : m[2] === 'Kb' ? 1024 : m[2] === 'Mb' ? 1024 ** 2 : 1024 ** 3;
  return Math.round(Number(m[1]) * mult);
}

/** 32-bit hex (tc prints u32 keys unpadded in JSON, padded in text) -> 8 lower-case digits. */
export function normalizeHex32(text: string): string | null {
  if (!/^(0x)?[0-9a-fA-F]{1,8}$/.test(text)) return null;
  return text.replace(/^0x/, '').toLowerCase().padStart(8, '0');
}

export function hex32ToIPv4(hex8: string): string {
  const n = parseInt(hex8, 16);
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}

export function ipv4ToHex32(ip: string): string {
  return ip
    .split('.')
    .map((o) => Number(o).toString(16).padStart(2, '0'))
    .join('');
}

/** Prefix length of a contiguous netmask (ffffff00 -> 24), or null when it has holes. */
export function prefixLengthOfMask(hex8: string): number | null {
  const n = parseInt(hex8, 16) >>> 0;
  let len = 0;
  while (len < 32 && ((n >>> (31 - len)) & 1) === 1) len++;
  const rebuilt = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return rebuilt === n ? len : null;
}
