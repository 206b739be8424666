// StrykerJS for `npm run mutate` (test/mutation/run.mjs passes --mutate and --testFiles per
// module, see modules.mjs). Light on a shared 2-core box: one test runner, per-test coverage so
// a mutant runs only the tests that reach it, and the TypeScript checker so a mutant that does
// not compile is not run at all.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  concurrency: 1,
  timeoutMS: 20000,
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['/reports', '/var', '/.stryker-tmp*'],
  reporters: ['clear-text', 'json', 'progress-append-only'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 90, low: 80, break: null },
};
