/**
 * /proc/swaps (Linux): a header, then one row per active swap area:
 *
 *   Filename<TAB>...Type<TAB>...Size<TAB>...Used<TAB>...Priority
 *   /dev/loop0p2                            partition<TAB>32764<TAB><TAB>0<TAB><TAB>-2
 *   /tmp/xx/sw\040ap                        file<TAB><TAB>8188<TAB><TAB>0<TAB><TAB>-2
 *
 * The kernel pads the name with spaces and escapes space, TAB, newline and backslash as
 * `\ooo` (seq_file_path), so the name never holds raw whitespace and rows split cleanly.
 * Sizes are KiB. lsblk also shows active swap as the mountpoint `[SWAP]`; this file is the
 * authority (it lists swap files too, which lsblk cannot).
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

/** One row of /proc/swaps. Sizes are KiB as the kernel prints them. */
export const swapEntry = z.object({
  /** unescaped (`\040` → space) */
  filename: z.string(),
  type: z.string(),
  sizeKiB: z.number().int().nonnegative(),
  usedKiB: z.number().int().nonnegative(),
  priority: z.number().int(),
});
export type SwapEntry = z.infer<typeof swapEntry>;

const PARSER = '/proc/swaps';
const HEADER = /^Filename\s+Type\s+Size\s+Used\s+Priority\s*$/;
const ROW = /^(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(-?\d+)\s*$/;

function unescapeOctal(s: string, line: number): string {
  if (!s.includes('\\')) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') {
      const oct = /^[0-7]{3}/.exec(s.slice(i + 1, i + 4));
      if (!oct) throw new ParseError(PARSER, 'invalid escape in file name', line);
      bytes.push(parseInt(oct[0], 8) & 0xff);
      i += 3;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(i) as number);
      bytes.push(...enc.encode(ch));
      i += ch.length - 1;
    }
  }
  return new TextDecoder('utf-8').decode(new Uint8Array(bytes));
}

export function parseProcSwaps(text: string): SwapEntry[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0 || !HEADER.test(lines[0])) {
    throw new ParseError(PARSER, 'missing "Filename Type Size Used Priority" header', 1);
  }
  return lines.slice(1).map((line, i) => {
    const m = ROW.exec(line);
    if (!m) throw new ParseError(PARSER, 'not a swap row', i + 2);
    return {
      filename: unescapeOctal(m[1], i + 2),
      type: m[2],
      sizeKiB: Number(m[3]),
      usedKiB: Number(m[4]),
      priority: Number(m[5]),
    };
  });
}
