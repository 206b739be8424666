/**
 * POST /fs/explore's answer written as JSON text straight from the host's compact result: the
 * same bytes as `JSON.stringify(expandExplore(r))` (test/routes/fs-explore-json.test.ts compares
 * them), without building an object per entry, checking it and serialising it again. For 100 000
 * entries that was ~3 copies of the tree in memory and most of the route's time.
 *
 * The text is built depth-first in pieces that are joined once at the end. Response validation:
 * this answer is not checked against exploreResultSchema at run time (it is produced here from a
 * typed compact tree, field by field); the tests check that its bytes equal the old serialisation
 * and that it parses with the schema.
 */
import { FLAG, type CompactEntry, type ExploreOpResult } from './explore';

const str = JSON.stringify;

/** Number as JSON.stringify writes it (non-finite → null, as JSON does). */
const num = (n: number) => (Number.isFinite(n) ? String(n) : 'null');

let lastMs = Number.NaN;
let lastIso = '';
/** Same rule as expandExplore's: an out-of-range timestamp becomes the epoch. */
function isoText(ms: number): string {
  if (ms === lastMs) return lastIso;
  const d = new Date(ms);
  lastIso = `"${Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString()}"`;
  lastMs = ms;
  return lastIso;
}

function writeEntries(out: string[], list: readonly CompactEntry[], parent: string): void {
  const prefix = parent === '/' ? '/' : `${parent}/`;
  out.push('[');
  for (let i = 0; i < list.length; i++) {
    const [name, flags, st, kids] = list[i];
    const path = prefix + name;
    out.push(
      `${i ? ',' : ''}{"dev":${num(st[0])},"mode":${num(st[1])},"nlink":${num(st[2])},"uid":${num(st[3])},"gid":${num(st[4])},"rdev":${num(st[5])},"blksize":${num(st[6])},"ino":${num(st[7])},"size":${num(st[8])},"blocks":${num(st[9])},"atimeMs":${num(st[10])},"mtimeMs":${num(st[11])},"ctimeMs":${num(st[12])},"birthtimeMs":${num(st[13])},"atime":${isoText(st[10])},"mtime":${isoText(st[11])},"ctime":${isoText(st[12])},"birthtime":${isoText(st[13])},"name":${str(name)},"path":${str(path)},"isSymbolicLink":${(flags & FLAG.symbolicLink) !== 0},"isBlockDevice":${(flags & FLAG.blockDevice) !== 0},"isDirectory":${(flags & FLAG.directory) !== 0},"isFile":${(flags & FLAG.file) !== 0},"children":`,
    );
    writeEntries(out, kids, path);
    out.push(`,"file_num":${kids.length}${flags & FLAG.truncated ? ',"truncated":true' : ''}}`);
  }
  out.push(']');
}

/** The spec's answer as JSON text, from the host operation's compact one. */
export function exploreJson(r: ExploreOpResult): string {
  const out: string[] = ['{"files":'];
  writeEntries(out, r.entries, r.path);
  out.push(
    `,"total":${num(r.total)},"truncated":${r.truncated},"truncatedBy":${str(r.truncatedBy)},"limits":${str(r.limits)},"errors":${str(r.errors)}}`,
  );
  return out.join('');
}
