import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.{ts,tsx}'],
          exclude: [...configDefaults.exclude, 'test/e2e/**', 'test/security/**'],
          globalSetup: ['test/support/toolchain-summary.ts'],
        },
      },
      {
        // The end-to-end and security tests run the built CLI: their global setup rebuilds a stale
        // dist/ first.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/security/**/*.test.ts'],
          globalSetup: ['test/support/fresh-build.ts', 'test/support/toolchain-summary.ts'],
        },
      },
    ],
  },
});
