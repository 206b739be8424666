import { defineConfig } from 'vitest/config';
import base from '../../vitest.config';

// Stryker's vitest runner (test/mutation/stryker.config.mjs), differing from the suite's config
// in three ways:
// - no build step: the sandbox's sources are instrumented, so always newer than dist/, and
//   `build.mjs --if-stale` would rebuild the bundles from mutated code at every run; dist/ is
//   copied from the worktree as built (`node build.mjs` before `npm run mutate`);
// - forked test processes: the runner forces `pool: 'threads'`, and the host sets
//   process.umask (runtime/db/database.ts), which a worker thread cannot; the plugin puts the
//   resolved projects back on forks (one at a time), as the suite runs them;
// - only the module's test files (BALLAST_MUTATE_TESTS, set by run.mjs): Stryker's own
//   --testFiles turns every static mutant (module-level code: a schema, a regex) into a runtime
//   one that is never active when the module loads, so all of them would survive.
export default defineConfig({
  plugins: [
    {
      name: 'ballast-mutation-forks',
      configureVitest({ project }) {
        project.config.pool = 'forks';
        project.config.poolOptions = { ...project.config.poolOptions, forks: { maxForks: 1, minForks: 1 } };
      },
    },
  ],
  test: {
    ...base.test,
    include: process.env.BALLAST_MUTATE_TESTS?.split(',') ?? base.test?.include,
    globalSetup: ['test/mutation/global-setup.ts'],
  },
});
