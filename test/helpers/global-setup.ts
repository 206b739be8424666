import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../..');

/**
 * Before any test file runs: build dist/ when it is missing or older than its sources
 * (`node build.mjs --if-stale`, see build.mjs isStale), so `npx vitest run` needs no manual
 * build; then one parent directory for every private temp dir of this test run
 * (test/helpers/tmp.ts), removed at the end of the run: workers may be stopped without running
 * their exit hooks.
 */
export default function setup(): () => void {
  execFileSync(process.execPath, [join(repo, 'build.mjs'), '--if-stale'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const dir = mkdtempSync(join(tmpdir(), 'ballast-run-'));
  process.env.BALLAST_TEST_TMP = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
