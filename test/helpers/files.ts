import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file below `dir` whose name `keep` accepts, as paths joined to `dir`, depth first in readdir order. */
export function filesUnder(dir: string, keep: (name: string) => boolean = () => true): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return filesUnder(p, keep);
    return keep(n) ? [p] : [];
  });
}
