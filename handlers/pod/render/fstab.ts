/**
 * Writes the pod area's fstab entries: each is one line ending in a marker comment
 * (`# ballast:pod-data`, `# ballast:pod-images`). An existing line with the same marker, or with
 * the same mountpoint, is replaced in place; otherwise the line is appended. Lines with a marker in
 * `remove` are dropped. Every other line is kept byte for byte.
 */
import { encodeFstab, parseFstab, type FstabEntry } from '../../tools/fstab';

export interface NewFstabEntry extends Omit<FstabEntry, 'line'> {
  marker: 'pod-data' | 'pod-images';
}

export const fstabLine = (e: NewFstabEntry) =>
  `${encodeFstab(e.fs_spec)} ${encodeFstab(e.fs_file)} ${e.fs_vfstype} ${e.fs_mntops.join(',')} ${e.fs_freq} ${e.fs_passno} # ballast:${e.marker}`;

export function upsertFstab(text: string, entries: NewFstabEntry[], remove: NewFstabEntry['marker'][] = []): string {
  let lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  // a role that is no longer an fstab mount (images on a mounted path): its old line goes
  lines = lines.filter((l) => !remove.some((m) => l.trimEnd().endsWith(`# ballast:${m}`)));
  for (const e of entries) {
    const parsed = parseFstab(lines.join('\n'));
    const byMarker = lines.findIndex((l) => l.trimEnd().endsWith(`# ballast:${e.marker}`));
    const byFile = parsed.find((p) => p.fs_file === e.fs_file)?.line ?? -1;
    const at = byMarker >= 0 ? byMarker : byFile;
    if (at < 0) {
      lines.push(fstabLine(e));
      continue;
    }
    lines[at] = fstabLine(e);
    // one line per mountpoint: another line mounting the same place would shadow ours
    if (byFile >= 0 && byFile !== at) lines = lines.filter((_, i) => i !== byFile);
  }
  return `${lines.join('\n')}\n`;
}
