/**
 * Root test configuration: one vitest run over every package's unit tests and the cross-package
 * suites in `test/`. Tests run on TypeScript sources through the `@postback/source` export condition,
 * never on `dist`.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@postback/source'] },
  ssr: { resolve: { conditions: ['@postback/source'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
