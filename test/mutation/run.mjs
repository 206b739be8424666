#!/usr/bin/env node
/**
 * `npm run mutate [-- <module>… | --changed <git-rev>] [--incremental]`: StrykerJS on the
 * security and durability modules of modules.mjs, one module per Stryker run (each only with
 * its own test files), niced, one test runner. Prints each module's mutation score and writes
 * reports/mutation/<module>.json (Stryker's mutation-testing-report schema) and summary.json.
 *   <module>…        only these (default: all, in the table's order)
 *   --changed <rev>  only the modules whose mutated files differ from <rev>, and only those files
 *   --incremental    reuse reports/mutation/<module>.incremental.json: mutants whose code and
 *                    covering tests did not change keep their last result
 * Exit code 1 when a module scores under 80% (MIN_SCORE).
 */
import { spawnSync, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MODULES } from './modules.mjs';

const MIN_SCORE = 80;
const repo = resolve(import.meta.dirname, '../..');
const out = join(repo, 'reports/mutation');
const args = process.argv.slice(2);
const incremental = args.includes('--incremental');
const changedAt = args.indexOf('--changed');
const base = changedAt >= 0 ? args[changedAt + 1] : undefined;
const named = args.filter((a, i) => !a.startsWith('--') && (changedAt < 0 || i !== changedAt + 1));
for (const n of named) if (!MODULES[n]) throw new Error(`no module ${n} (modules: ${Object.keys(MODULES).join(', ')})`);

let plan = (named.length ? named : Object.keys(MODULES)).map((name) => ({ name, ...MODULES[name] }));
if (base) {
  const changed = new Set(
    execFileSync('git', ['diff', '--name-only', base, '--'], { cwd: repo, encoding: 'utf8' }).split('\n'),
  );
  plan = plan
    .map((m) => ({ ...m, mutate: m.mutate.filter((f) => changed.has(f.split(':')[0])) }))
    .filter((m) => m.mutate.length > 0);
  console.log(`changed since ${base}: ${plan.map((m) => `${m.name} (${m.mutate.join(', ')})`).join('; ') || 'none'}`);
}

/** Stryker's score: detected (killed, timed out) over valid mutants (no compile or runtime errors). */
function score(report) {
  const n = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0 };
  const survivors = [];
  for (const [file, f] of Object.entries(report.files))
    for (const m of f.mutants) {
      if (m.status in n) n[m.status]++;
      if (m.status === 'Survived' || m.status === 'NoCoverage')
        survivors.push(`${file}:${m.location.start.line} ${m.mutatorName} ${m.status}: ${m.replacement ?? ''}`.trim());
    }
  const valid = n.Killed + n.Timeout + n.Survived + n.NoCoverage;
  return { ...n, score: valid ? Math.round((1000 * (n.Killed + n.Timeout)) / valid) / 10 : 100, survivors };
}

mkdirSync(out, { recursive: true });
// read again before each write: another run may have written its modules meanwhile
const readSummary = () =>
  existsSync(join(out, 'summary.json')) ? JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) : {};
let summary = readSummary();
let low = false;
for (const m of plan) {
  const started = Date.now();
  console.log(`\n== ${m.name}: ${m.mutate.join(', ')}`);
  const r = spawnSync(
    'nice',
    [
      '-n',
      '10',
      process.execPath,
      join(repo, 'node_modules/@stryker-mutator/core/bin/stryker.js'),
      'run',
      'test/mutation/stryker.config.mjs',
      '--mutate',
      m.mutate.join(','),
      ...(incremental ? ['--incremental', '--incrementalFile', `reports/mutation/${m.name}.incremental.json`] : []),
    ],
    // the test files go to vitest's include (test/mutation/vitest.config.ts), not to --testFiles
    { cwd: repo, stdio: 'inherit', env: { ...process.env, BALLAST_MUTATE_TESTS: m.tests.join(',') } },
  );
  if (r.status !== 0) throw new Error(`stryker failed on ${m.name} (exit ${r.status})`);
  copyFileSync(join(out, 'mutation.json'), join(out, `${m.name}.json`));
  const s = score(JSON.parse(readFileSync(join(out, 'mutation.json'), 'utf8')));
  summary = readSummary();
  summary[m.name] = {
    date: new Date().toISOString().slice(0, 10),
    minutes: Math.round((Date.now() - started) / 6e4),
    ...s,
  };
  if (s.score < MIN_SCORE) low = true;
  writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
}

console.log('\nmodule                score  killed timeout survived no-coverage');
for (const m of plan) {
  const s = summary[m.name];
  console.log(
    `${m.name.padEnd(20)} ${String(s.score).padStart(6)}% ${String(s.Killed).padStart(7)} ${String(s.Timeout).padStart(7)} ${String(s.Survived).padStart(8)} ${String(s.NoCoverage).padStart(11)}`,
  );
}
if (low) {
  console.log(`\nunder ${MIN_SCORE}%: see the survivors in reports/mutation/summary.json`);
  process.exitCode = 1;
}
