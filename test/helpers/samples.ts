/** Paths to the shared real samples; tests that need them skip with a message when they are absent. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHARED_SAMPLES = path.resolve(ROOT, '../shared/samples');
export const FUSION = path.join(SHARED_SAMPLES, 'fusion-jsonl');
export const LEGACY = path.join(SHARED_SAMPLES, 'legacy-dbt-core');

export function sample(dir: string, name: string): string {
  return path.join(dir, name);
}

/**
 * What a test needs is missing: outside CI the test skips with `why` said; in CI, where .ci/run
 * installs everything and the shared samples are always beside the project, that is a failure.
 */
export function skipOrFailInCi(why: string): void {
  if (process.env.CI) throw new Error(`${why} (in CI it must be there)`);
  console.warn(`[runlens tests] SKIPPING: ${why}`);
}

/** Title suffix that says why a block is skipped, so a skip never looks like a pass. */
export function samplesNote(dir: string): { missing: boolean; title: (t: string) => string } {
  const missing = !existsSync(dir);
  if (missing) skipOrFailInCi(`tests on real samples: ${dir} not found (the shared/ folder beside the project)`);
  return { missing, title: (t) => (missing ? `${t} (skipped: ${dir} not found)` : t) };
}
