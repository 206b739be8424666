import { defineConfig } from 'vitest/config';

// Tiers share one machine-wide resource each (netns names, loop devices, ports), so files run
// in separate forks but never more than two at once on this 2-core box.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
