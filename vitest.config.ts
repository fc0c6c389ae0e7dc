import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB and child processes are heavy; two cores on the CI machine.
    maxWorkers: 2,
  },
});
