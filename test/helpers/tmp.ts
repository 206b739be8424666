import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
let hooked = false;

/**
 * A private temp directory, removed when the test process exits (even if a test failed), and in
 * any case with the run's parent directory (global-setup.ts) when vitest finishes.
 */
export function privateDir(prefix: string): string {
  const dir = mkdtempSync(join(process.env.BALLAST_TEST_TMP ?? tmpdir(), `${prefix}-`));
  made.push(dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}
