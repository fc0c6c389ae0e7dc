/**
 * `npm run bench`: every figure the issues name, each beside a baseline measured in the same run.
 * `npm run bench -- core service` runs only those parts.
 */
import { pathToFileURL } from 'node:url';

const parts: Record<string, () => Promise<unknown>> = {
  startup: async () => (await import('./startup.js')).runStartupBench(),
  core: async () => (await import('./core.js')).runCoreBench(),
  produce: async () => (await import('./produce.js')).runProduceBench(),
  legacy: async () => (await import('./legacy.js')).runLegacyBench(),
  explore: async () => (await import('./explore.js')).runExploreBench(),
  receive: async () => (await import('./receive.js')).runReceiveBench(),
  history: async () => (await import('./history.js')).runHistoryBench(),
  report: async () => (await import('./report.js')).runReportBench(),
  service: async () => {
    const m = await import('./service.js');
    await m.runServiceBench();
    const url = process.env.RUNLENS_BENCH_DATABASE_URL ?? process.env.RUNLENS_TEST_DATABASE_URL;
    if (url) await m.runPostgresScaleBench(url);
    else console.log('service: PostgreSQL scale-out skipped: set RUNLENS_BENCH_DATABASE_URL (eval "$(test/service/start-postgres.sh)")');
  },
};

export async function main(argv: string[]): Promise<void> {
  const wanted = argv.length ? argv : Object.keys(parts);
  for (const name of wanted) {
    const run = parts[name];
    if (!run) throw new Error(`unknown bench part ${name} (known: ${Object.keys(parts).join(', ')})`);
    console.log(`== ${name}`);
    const t = performance.now();
    await run();
    console.log(`== ${name}: ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
