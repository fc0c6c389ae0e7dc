/**
 * The same service suite on PostgreSQL. Needs RUNLENS_TEST_DATABASE_URL (see test/service/start-postgres.sh):
 * without it the suite fails loudly in CI (CI=true) and is skipped with a message elsewhere.
 */
import { describe, it } from 'vitest';
import { serviceSuite } from './suite.js';
import { listingSuite } from './listings.js';
import { PG_URL, postgresFactory } from './helpers.js';

if (PG_URL) {
  serviceSuite(postgresFactory);
  listingSuite(postgresFactory);
} else if (process.env.CI === 'true') {
  describe('service on postgres', () => {
    it('needs RUNLENS_TEST_DATABASE_URL in CI', () => {
      throw new Error('RUNLENS_TEST_DATABASE_URL is not set: start PostgreSQL with `eval "$(test/service/start-postgres.sh)"` before the tests');
    });
  });
} else {
  console.warn('[runlens tests] SKIPPING the PostgreSQL service suite: set RUNLENS_TEST_DATABASE_URL (eval "$(test/service/start-postgres.sh)")');
  describe.skip('service on postgres (skipped: RUNLENS_TEST_DATABASE_URL not set)', () => {
    it('runs the shared suite', () => undefined);
  });
}
