/**
 * The traffic area's operands. These are also the plan's guard: tc has no `--`, so every value put
 * into an argv must be impossible to read as an option or keyword. Each pattern below starts with
 * a letter/digit.
 */
import * as z from 'zod';

/**
 * Linux interface name: 1..15 bytes (IFNAMSIZ - 1), no '/', ':' or whitespace (dev_valid_name).
 * We also refuse a leading '-' or '.', so a name can never look like a tc option or "."/"..".
 */
export const deviceName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}$/, 'not a valid interface name (1-15 of A-Z a-z 0-9 _ . -)');

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
/**
 * Canonical dotted-quad IPv4 (no leading zeros), so a stored rule and the address decoded back
 * from tc compare as equal strings. IPv6 is not supported: the u32 plan matches IPv4 headers only.
 */
export const ipv4Address = z
  .string()
  .regex(new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`), 'not an IPv4 address (a.b.c.d)')
  .refine((ip) => ip !== '0.0.0.0' && ip !== '255.255.255.255', 'unspecified/broadcast address cannot be limited');

/** Highest rate accepted, MB/s: 800 Gbit/s, above any NIC this box has; guards typos like 1e9. */
export const MAX_RATE_MB = 100_000;

/**
 * Rule rate in megabytes per second (spec: "rate (number, in megabytes)"; 1 MB = 10^6 bytes, as
 * tc's own `mbps`). The kernel keeps whole bytes per second, so the rate must be at least 1 kB/s
 * and is rounded to whole bytes per second when applied.
 */
export const rateMb = z
  .number()
  .refine(Number.isFinite, 'rate must be a finite number of megabytes per second (MB/s)')
  .refine((r) => r >= 0.001, 'rate must be at least 0.001 MB/s (megabytes per second; 1 kB/s)')
  .refine((r) => r <= MAX_RATE_MB, `rate must be at most ${MAX_RATE_MB} MB/s (megabytes per second)`);

/**
 * Rule id: 1..4095. Id n owns htb class 1:<n hex> and u32 filter item 800::<n hex>; u32 item
 * numbers are 12 bits (tc refuses 800::1000) and 0 means "kernel picks", so 0 is the reserved
 * sentinel and 0xfff the top.
 */
export const MAX_RULE_ID = 0xfff;
export const ruleId = z.number().int().min(1).max(MAX_RULE_ID);

/** Rule names travel in URL paths (/network/traffic/control/{rule_name}/destroy): keep them plain. */
export const ruleName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'rule name: 1-64 of A-Z a-z 0-9 _ . - (not starting with a symbol)');

/** ids[0]: the reserved sentinel, standing for id 0 (htb minor 0 is the qdisc itself; u32 item 0 = "auto"). */
export const RESERVED_ID = '0';
