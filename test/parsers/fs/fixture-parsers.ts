/**
 * Which parser reads which fs fixture, shared by the fixture test and the drafting tool
 * (test/tools/fs/draft-expected.ts) so both always agree.
 *
 * `<name>.expected.json` beside each fixture holds what `parseFixture` returns, or, when the
 * parser must refuse the output, `{"parseError": {"parser": ..., "line": ...}}`.
 */
import * as z from 'zod';
import { ParseError } from '../../../handlers/core/parse-error';
import type { Fixture } from '../../../runtime/system/fixture-file';
import { parseFindmnt } from '../../../handlers/fs/parse/findmnt';
import { parseGetfacl, parseSetfaclErrors, parseSetfaclTest } from '../../../handlers/fs/parse/getfacl';
import { parseLsblk } from '../../../handlers/fs/parse/lsblk';
import { parseProcSwaps } from '../../../handlers/fs/parse/proc-swaps';
import { parseWipefs } from '../../../handlers/fs/parse/wipefs';
import { parseXxhsumCheck, parseXxhsumSums } from '../../../handlers/fs/parse/xxhsum';
import {
  getfaclFileSchema,
  lsblkDeviceSchema,
  mountEntrySchema,
  setfaclErrorSchema,
  setfaclTestRecordSchema,
  swapEntrySchema,
  wipefsSignatureSchema,
  xxhsumCheckSchema,
  xxhsumSumSchema,
} from '../../../handlers/fs/schemas';

export const FS_FIXTURE_TOOLS = ['xxhsum', 'getfacl', 'setfacl', 'lsblk', 'findmnt', 'wipefs', 'swaps'] as const;
export type FsFixtureTool = (typeof FS_FIXTURE_TOOLS)[number];

/** file operands of an xxhsum generate call: after `--`, else every non-option argument */
export function xxhsumFileNames(argv: readonly string[]): string[] {
  const dd = argv.indexOf('--');
  if (dd >= 0) return argv.slice(dd + 1);
  return argv.slice(1).filter((a) => !a.startsWith('-'));
}

export function isXxhsumCheck(argv: readonly string[]): boolean {
  return argv.includes('-c') || argv.includes('--check');
}

/** what a setfacl invocation yields: the --test records (if any) and classified stderr */
export const setfaclOutcomeSchema = z.object({
  records: z.array(setfaclTestRecordSchema),
  errors: z.array(setfaclErrorSchema),
});

export function parseFixture(tool: FsFixtureTool, f: Fixture): unknown {
  switch (tool) {
    case 'xxhsum':
      return isXxhsumCheck(f.argv)
        ? parseXxhsumCheck(f.stdout, f.stderr)
        : parseXxhsumSums(f.stdout, { fileNames: xxhsumFileNames(f.argv) });
    case 'getfacl':
      return parseGetfacl(f.stdout);
    case 'setfacl':
      return {
        records: parseSetfaclTest(f.stdout, f.argv.includes('--test') ? { root: f.argv[f.argv.length - 1] } : {}),
        errors: parseSetfaclErrors(f.stderr),
      };
    case 'lsblk':
      return parseLsblk(f.stdout);
    case 'findmnt':
      return parseFindmnt(f.stdout);
    case 'wipefs':
      return parseWipefs(f.stdout);
    case 'swaps':
      return parseProcSwaps(f.stdout);
  }
}

/** The schema every successful expected parse of `tool` must satisfy. */
export function expectedSchema(tool: FsFixtureTool, f: Fixture): z.ZodType {
  switch (tool) {
    case 'xxhsum':
      return isXxhsumCheck(f.argv) ? xxhsumCheckSchema : z.array(xxhsumSumSchema);
    case 'getfacl':
      return z.array(getfaclFileSchema);
    case 'setfacl':
      return setfaclOutcomeSchema;
    case 'lsblk':
      return z.array(lsblkDeviceSchema);
    case 'findmnt':
      return z.array(mountEntrySchema);
    case 'wipefs':
      return z.array(wipefsSignatureSchema);
    case 'swaps':
      return z.array(swapEntrySchema);
  }
}

/** parseFixture, with a refusal turned into the `parseError` form used in expected.json */
export function outcome(tool: FsFixtureTool, f: Fixture): unknown {
  try {
    return parseFixture(tool, f);
  } catch (e) {
    if (e instanceof ParseError) return { parseError: { parser: e.parser, line: e.line ?? null } };
    throw e;
  }
}
