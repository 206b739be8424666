/**
 * ethtool text output (ethtool 6.1 on Debian 12 has no JSON for these commands):
 *  - `ethtool <dev>`    → EthtoolSettings
 *  - `ethtool -i <dev>` → EthtoolDriverInfo
 *
 * `ethtool <dev>` layout: a banner `Settings for X:`, then `Key: value` lines indented one
 * level (a tab, or 8 spaces in some captures), and continuation lines indented deeper that carry
 * no key (link modes, message-level names). Indentation is measured with tabs expanded to 8
 * columns, which tells the two apart without guessing from the content. Split on the first ':'
 * only. Keys vary by driver and by netlink vs ioctl, so every key is optional and unknown keys
 * are kept verbatim in `other`.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

/** `ethtool <dev>` (text; Debian 12's ethtool 6.1 has no JSON for this command). */
export const ethtoolSettings = z.object({
  dev: z.string(),
  supported_ports: z.array(z.string()),
  /** empty when ethtool printed "Not reported" */
  supported_link_modes: z.array(z.string()),
  supported_pause_frame_use: z.string().nullable(),
  supports_auto_negotiation: z.boolean().nullable(),
  advertised_link_modes: z.array(z.string()),
  advertised_pause_frame_use: z.string().nullable(),
  advertised_auto_negotiation: z.boolean().nullable(),
  link_partner_advertised_link_modes: z.array(z.string()).nullable(),
  /** Mb/s; 'unknown' for `Speed: Unknown!`; null when the line is absent (e.g. `lo`) */
  speed: z.union([z.number(), z.literal('unknown')]).nullable(),
  /** as printed: Full, Half, or `Unknown! (255)` */
  duplex: z.string().nullable(),
  port: z.string().nullable(),
  phyad: z.number().int().nullable(),
  transceiver: z.string().nullable(),
  auto_negotiation: z.boolean().nullable(),
  mdi_x: z.string().nullable(),
  supports_wake_on: z.string().nullable(),
  wake_on: z.string().nullable(),
  /** `Current message level: 0x00000007 (7)` → 7; the names on the following line are dropped */
  message_level: z.number().int().nullable(),
  link_detected: z.boolean().nullable(),
  /** every other `Key: value` line, verbatim, so nothing the driver printed is lost */
  other: z.record(z.string(), z.string()),
});
export type EthtoolSettings = z.infer<typeof ethtoolSettings>;

/** `ethtool -i <dev>`; values are verbatim (may be empty, or `N/A` for virtual devices). */
export const ethtoolDriverInfo = z.object({
  driver: z.string(),
  version: z.string().nullable(),
  firmware_version: z.string().nullable(),
  expansion_rom_version: z.string().nullable(),
  bus_info: z.string().nullable(),
  supports_statistics: z.boolean().nullable(),
  supports_test: z.boolean().nullable(),
  supports_eeprom_access: z.boolean().nullable(),
  supports_register_dump: z.boolean().nullable(),
  supports_priv_flags: z.boolean().nullable(),
});
export type EthtoolDriverInfo = z.infer<typeof ethtoolDriverInfo>;

const SETTINGS = 'ethtool';
const DRIVER = 'ethtool-i';

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

function indentWidth(line: string): number {
  let col = 0;
  for (const ch of line) {
    if (ch === '\t') col = (Math.floor(col / 8) + 1) * 8;
    else if (ch === ' ') col += 1;
    else break;
  }
  return col;
}

function yesNo(parser: string, value: string, line: number): boolean {
  const v = value.trim().toLowerCase();
  if (v === 'yes' || v === 'on') return true;
  if (v === 'no' || v === 'off') return false;
  throw new ParseError(parser, `expected yes/no or on/off, got something else`, line);
}

function modes(value: string): string[] {
  const v = value.trim();
  if (v === '' || v === 'Not reported') return [];
  return v.split(/\s+/);
}

interface Entry {
  key: string;
  value: string;
  line: number;
}

export function parseEthtool(stdout: string): EthtoolSettings {
  const lines = splitLines(stdout);
  if (lines.length === 0 || stdout.trim() === '')
    throw new ParseError(SETTINGS, 'empty output (did the command fail?)', 1);
  const banner = /^Settings for (\S+):\s*$/.exec(lines[0] ?? '');
  if (!banner || !banner[1]) throw new ParseError(SETTINGS, 'expected "Settings for <dev>:"', 1);

  // Group key lines with their continuation lines.
  const entries: Entry[] = [];
  let keyIndent: number | null = null;
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const lineNo = i + 1;
    if (raw.trim() === '') continue; // tun/tap print a whitespace-only line after the message level
    const indent = indentWidth(raw);
    const last = entries[entries.length - 1];
    if (keyIndent !== null && indent > keyIndent && last) {
      last.value = last.value === '' ? raw.trim() : `${last.value} ${raw.trim()}`;
      continue;
    }
    const m = /^\s+([A-Za-z][^:]*):(?:[ \t]+(.*))?$/.exec(raw);
    if (!m || !m[1] || indent === 0) throw new ParseError(SETTINGS, 'expected an indented "Key: value" line', lineNo);
    if (keyIndent === null) keyIndent = indent;
    else if (indent !== keyIndent) throw new ParseError(SETTINGS, 'unexpected indentation', lineNo);
    entries.push({ key: m[1].trim(), value: (m[2] ?? '').trim(), line: lineNo });
  }

  const out: EthtoolSettings = {
    dev: banner[1],
    supported_ports: [],
    supported_link_modes: [],
    supported_pause_frame_use: null,
    supports_auto_negotiation: null,
    advertised_link_modes: [],
    advertised_pause_frame_use: null,
    advertised_auto_negotiation: null,
    link_partner_advertised_link_modes: null,
    speed: null,
    duplex: null,
    port: null,
    phyad: null,
    transceiver: null,
    auto_negotiation: null,
    mdi_x: null,
    supports_wake_on: null,
    wake_on: null,
    message_level: null,
    link_detected: null,
    other: {},
  };

  for (const { key, value, line } of entries) {
    switch (key) {
      case 'Supported ports': {
        const m = /^\[(.*)\]$/.exec(value);
        if (!m) throw new ParseError(SETTINGS, 'expected "[ PORT ... ]"', line);
        out.supported_ports = modes(m[1] ?? '');
        break;
      }
      case 'Supported link modes':
        out.supported_link_modes = modes(value);
        break;
      case 'Advertised link modes':
        out.advertised_link_modes = modes(value);
        break;
      case 'Link partner advertised link modes':
        out.link_partner_advertised_link_modes = modes(value);
        break;
      case 'Supported pause frame use':
        out.supported_pause_frame_use = value;
        break;
      case 'Advertised pause frame use':
        out.advertised_pause_frame_use = value;
        break;
      case 'Supports auto-negotiation':
        out.supports_auto_negotiation = yesNo(SETTINGS, value, line);
        break;
      case 'Advertised auto-negotiation':
        out.advertised_auto_negotiation = yesNo(SETTINGS, value, line);
        break;
      case 'Speed': {
        // netlink/settings.c prints "Unknown!"; the ioctl path the same via "Unknown! (%u)"
        if (/^Unknown!/.test(value)) out.speed = 'unknown';
        else {
          const m = /^(\d+)Mb\/s$/.exec(value);
          if (!m) throw new ParseError(SETTINGS, 'expected "<n>Mb/s" or "Unknown!" for Speed', line);
          out.speed = Number(m[1]);
        }
        break;
      }
      case 'Duplex':
        out.duplex = value;
        break;
      case 'Port':
        out.port = value;
        break;
      case 'PHYAD': {
        if (!/^\d+$/.test(value)) throw new ParseError(SETTINGS, 'expected a number for PHYAD', line);
        out.phyad = Number(value);
        break;
      }
      case 'Transceiver':
        out.transceiver = value;
        break;
      case 'Auto-negotiation':
        out.auto_negotiation = yesNo(SETTINGS, value, line);
        break;
      case 'MDI-X':
        out.mdi_x = value;
        break;
      case 'Supports Wake-on':
        out.supports_wake_on = value;
        break;
      case 'Wake-on':
        out.wake_on = value;
        break;
      case 'Current message level': {
        const m = /^0x[0-9a-fA-F]+ \((\d+)\)/.exec(value);
        if (!m) throw new ParseError(SETTINGS, 'expected "0x... (n)" for the message level', line);
        out.message_level = Number(m[1]);
        break;
      }
      case 'Link detected':
        out.link_detected = yesNo(SETTINGS, value, line);
        break;
      default:
        out.other[key] = value;
    }
  }
  return out;
}

const DRIVER_KEYS: Record<string, keyof EthtoolDriverInfo> = {
  driver: 'driver',
  version: 'version',
  'firmware-version': 'firmware_version',
  'expansion-rom-version': 'expansion_rom_version',
  'bus-info': 'bus_info',
  'supports-statistics': 'supports_statistics',
  'supports-test': 'supports_test',
  'supports-eeprom-access': 'supports_eeprom_access',
  'supports-register-dump': 'supports_register_dump',
  'supports-priv-flags': 'supports_priv_flags',
};

export function parseEthtoolDriver(stdout: string): EthtoolDriverInfo {
  const lines = splitLines(stdout);
  if (stdout.trim() === '') throw new ParseError(DRIVER, 'empty output (did the command fail?)', 1);
  const out: EthtoolDriverInfo = {
    driver: '',
    version: null,
    firmware_version: null,
    expansion_rom_version: null,
    bus_info: null,
    supports_statistics: null,
    supports_test: null,
    supports_eeprom_access: null,
    supports_register_dump: null,
    supports_priv_flags: null,
  };
  let sawDriver = false;
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const m = /^([a-z][a-z-]*):(?: (.*))?$/.exec(raw);
    if (!m || !m[1]) throw new ParseError(DRIVER, 'expected a "key: value" line', i + 1);
    const field = DRIVER_KEYS[m[1]];
    const value = (m[2] ?? '').trim();
    if (!field) return; // a newer ethtool may add keys; nothing the product shows
    if (field === 'driver') {
      if (value === '') throw new ParseError(DRIVER, 'empty driver name', i + 1);
      out.driver = value;
      sawDriver = true;
    } else if (field.startsWith('supports_')) {
      (out as Record<string, unknown>)[field] = yesNo(DRIVER, value, i + 1);
    } else {
      // empty means the driver reports nothing; keep "N/A" verbatim (that is what it says)
      (out as Record<string, unknown>)[field] = value === '' ? null : value;
    }
  });
  if (!sawDriver) throw new ParseError(DRIVER, 'no "driver:" line', 1);
  return out;
}
