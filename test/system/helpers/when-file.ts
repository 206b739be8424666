import { existsSync, readFileSync, watch } from 'node:fs';
import { join } from 'node:path';

/** Resolves once `file` exists and its text matches `re` (a stand-in tool wrote its pid). */
export function whenFileMatches(file: string, re: RegExp): Promise<void> {
  return new Promise((resolve) => {
    const test = () => existsSync(file) && re.test(readFileSync(file, 'utf8'));
    if (test()) return resolve();
    const w = watch(join(file, '..'), () => {
      if (test()) {
        w.close();
        resolve();
      }
    });
  });
}
