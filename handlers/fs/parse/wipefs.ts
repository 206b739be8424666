/**
 * `wipefs -n -J -O DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE -- <device>` (util-linux 2.38.1).
 *
 * Why wipefs rather than lsblk's FSTYPE: wipefs probes the device itself (libblkid, no udev
 * database), and reports partition tables (`dos`, `gpt`, `PMBR`) as well as filesystems, RAID
 * members and LUKS headers, each with its offset. `-n` (no-act) makes it read only.
 * Without signatures 2.38 prints `{"signatures": []}` (with a blank line inside); some builds
 * print nothing at all, which we read as the same.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { parseJsonOutput } from '../../tools/json-output';

/** One signature from `wipefs -n -J` (read only; `-n` never writes). */
export const wipefsSignature = z.object({
  device: z.string(),
  offset: z.number().int().nonnegative(),
  type: z.string(),
  uuid: z.string().nullable(),
  label: z.string().nullable(),
  /** only with `-O ...,USAGE`: `filesystem`, `partition-table`, `raid`, `crypto`, `other` (swap says `other`) */
  usage: z.string().nullable(),
});
export type WipefsSignature = z.infer<typeof wipefsSignature>;

const PARSER = 'wipefs';

export function wipefsArgv(device: string): string[] {
  return ['/usr/sbin/wipefs', '-n', '-J', '-O', 'DEVICE,OFFSET,TYPE,UUID,LABEL,USAGE', '--', device];
}

const rawOutput = z.object({
  signatures: z.array(
    z.object({
      device: z.string(),
      offset: z.string(),
      type: z.string(),
      uuid: z.string().nullish(),
      label: z.string().nullish(),
      usage: z.string().nullish(),
    }),
  ),
});

export function parseWipefs(stdout: string): WipefsSignature[] {
  if (stdout.trim() === '') return [];
  return parseJsonOutput(PARSER, stdout, rawOutput).signatures.map((s) => {
    // wipefs prints offsets as hex ("0x438"); decimal is accepted for safety
    if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(s.offset)) throw new ParseError(PARSER, `bad offset "${s.offset}"`);
    return {
      device: s.device,
      offset: Number(s.offset),
      type: s.type,
      uuid: s.uuid ?? null,
      label: s.label ?? null,
      usage: s.usage ?? null,
    };
  });
}
