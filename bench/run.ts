/**
 * `npm run bench`: every figure the issues name, each beside a baseline measured in the same run.
 * `npm run bench -- core service` runs only those parts.
 */
import { pathToFileURL } from 'node:url';

const parts: Record<string, () => Promise<unknown>> = {
  core: async () => (await import('./core.js')).runCoreBench(),
  receive: async () => (await import('./receive.js')).runReceiveBench(),
  service: async () => (await import('./service.js')).runServiceBench(),
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
