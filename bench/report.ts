/**
 * Report bench (issue 24): the HTML report of a 100k-span run, written by the CLI, then opened in
 * headless Chromium: the time from navigation to the chart drawn (the page's `runlens-drawn` mark),
 * beside an empty page and the report of a 50-node run, each opened `reps` times in a fresh page.
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/report.js [--nodes 20000]`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spread, spreadText } from './history.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '../src/cli.js');
const CHROMIUM = process.env.RUNLENS_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

function cli(args: string[]): { ms: number; out: string } {
  const t = performance.now();
  const out = execFileSync(process.execPath, ['--max-semi-space-size=32', CLI, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  return { ms: performance.now() - t, out };
}

export async function runReportBench(o: { nodes?: number; reps?: number } = {}): Promise<void> {
  const nodes = o.nodes ?? 20_000;
  const reps = o.reps ?? 5;
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-report-'));
  try {
    const big = path.join(dir, 'big.jsonl');
    const small = path.join(dir, 'small.jsonl');
    cli(['generate', '-o', big, '--nodes', String(nodes), '--seed', '7', '--fail-rate', '0.01']);
    cli(['generate', '-o', small, '--nodes', '50', '--seed', '7']);
    const spans = Number(/"spans":\s*(\d+)/.exec(cli(['runs', big, '--format', 'json']).out)?.[1] ?? 0);
    const baseline = cli(['runs', big, '--format', 'json']).ms;
    const out = path.join(dir, 'big.html');
    const write = cli(['report', big, '-o', out]).ms;
    const smallOut = path.join(dir, 'small.html');
    cli(['report', small, '-o', smallOut]);
    const empty = path.join(dir, 'empty.html');
    writeFileSync(empty, '<!doctype html><html><head><meta charset="utf-8"><title>empty</title></head><body></body></html>');
    console.log(`report: ${spans.toLocaleString()}-span run: runlens report ${(write / 1000).toFixed(2)} s beside runlens runs of the same file ${(baseline / 1000).toFixed(2)} s (both load it); the file ${(statSync(out).size / 2 ** 20).toFixed(1)} MB`);

    if (!existsSync(CHROMIUM)) {
      console.log(`report: browser timing skipped: ${CHROMIUM} not found (apt-get install chromium)`);
      return;
    }
    const { chromium } = await import('playwright-core');
    const profile = mkdtempSync(path.join(tmpdir(), 'runlens-bench-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1400, height: 900 } });
    try {
      // navigation start to the chart drawn (for the empty page: to its load event)
      const open = async (file: string, drawn: boolean): Promise<number> => {
        const page = await context.newPage();
        await page.goto(pathToFileURL(file).href);
        const ms = drawn
          ? ((await (await page.waitForFunction("performance.getEntriesByName('runlens-drawn')[0]?.startTime", undefined, { timeout: 60_000 })).jsonValue()) as number)
          : ((await page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")) as number);
        await page.close();
        return ms;
      };
      const measure = async (file: string, drawn: boolean) => {
        await open(file, drawn); // warm-up: the browser's first page
        const xs: number[] = [];
        for (let i = 0; i < reps; i++) xs.push(await open(file, drawn));
        return spread(xs);
      };
      const e = await measure(empty, false);
      const s = await measure(smallOut, true);
      const b = await measure(out, true);
      console.log(`report: Chromium, navigation to drawn: ${spans.toLocaleString()}-span run ${spreadText(b)} (goal < 2000 ms: ${b.median < 2000 ? 'met' : 'NOT met'}); 50-node run ${spreadText(s)}; an empty page to its load event ${spreadText(e)}`);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--nodes');
  await runReportBench({ nodes: i > 0 ? Number(process.argv[i + 1]) : undefined });
}
