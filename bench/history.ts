/**
 * History bench (issue 24): 1,000 generated runs of a 200-node project loaded into one --db, then
 * the history queries (flaky-tests, node-trends, failure-history) and critical-path over it, each
 * beside a plain scan of node_results on the same model, and the time to load one more run into it.
 * The machine may be shared: each query runs `reps` times after a warm-up, and the median, fastest
 * and slowest are printed.
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/history.js [--runs 1000] [--nodes 200]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findSavedQuery, runSavedQuery } from '../src/analyze/queries.js';
import { Db } from '../src/store/db.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '../src/cli.js');

/** The runlens CLI in a process of its own (the same young-generation size as its shebang); wall ms. */
function cli(args: string[]): { ms: number; out: string } {
  const t = performance.now();
  const out = execFileSync(process.execPath, ['--max-semi-space-size=32', CLI, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  return { ms: performance.now() - t, out };
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  all: number[];
}

export function spread(xs: number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s[s.length - 1]!, all: xs };
}

export const spreadText = (s: Spread, unit = 'ms', digits = 0) =>
  `median ${s.median.toFixed(digits)} ${unit} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)} over ${s.all.length})`;

/**
 * Wall time and CPU time of this process (DuckDB's threads included): on a machine shared with other
 * work the wall time moves with the load, the CPU time much less.
 */
async function timed(reps: number, f: () => Promise<unknown>): Promise<{ wall: Spread; cpu: Spread }> {
  await f(); // warm-up: plans, caches, the first read of the file
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    await f();
    wall.push(performance.now() - t);
    const u = process.cpuUsage(c);
    cpu.push((u.user + u.system) / 1000);
  }
  return { wall: spread(wall), cpu: spread(cpu) };
}

const timedText = (x: { wall: Spread; cpu: Spread }) => `${spreadText(x.wall)}, CPU ${spreadText(x.cpu)}`;

export async function runHistoryBench(o: { runs?: number; nodes?: number; reps?: number } = {}): Promise<void> {
  const runs = o.runs ?? 1000;
  const nodes = o.nodes ?? 200;
  const reps = o.reps ?? 7;
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-history-'));
  try {
    const file = path.join(dir, 'runs.parquet');
    const gen = cli(['generate', '-o', file, '--runs', String(runs), '--nodes', String(nodes), '--seed', '5', '--no-detail']);
    const records = Number(/wrote (\d+) records/.exec(gen.out)?.[1] ?? 0);
    console.log(`history: generated ${runs.toLocaleString()} runs of a ${nodes}-node project: ${records.toLocaleString()} records, Parquet ${(statSync(file).size / 2 ** 20).toFixed(0)} MB (${(gen.ms / 1000).toFixed(1)} s)`);
    const dbFile = path.join(dir, 'history.duckdb');
    const load = cli(['load', file, '--db', dbFile]);
    console.log(`history: load into a new --db: ${(load.ms / 1000).toFixed(2)} s (${Math.round(records / (load.ms / 1000)).toLocaleString()} records/s), the file ${(statSync(dbFile).size / 2 ** 20).toFixed(0)} MB`);

    const db = await Db.open(dbFile);
    try {
      const n = await db.scalar<number>('SELECT count(*)::INTEGER FROM runs');
      const scan = await timed(reps, () => db.all('SELECT count(*), sum(duration_ms) FROM node_results'));
      console.log(`history: baseline, a scan of node_results (${(await db.scalar<number>('SELECT count(*)::INTEGER FROM node_results')).toLocaleString()} rows): ${timedText(scan)}`);
      for (const name of ['flaky-tests', 'node-trends', 'failure-history', 'critical-path']) {
        const q = findSavedQuery(name);
        // the critical path of one run (every run at once is a bulk job, not a question)
        const params: Record<string, string> = name === 'critical-path' ? { trace: await db.scalar<string>('SELECT trace_id FROM runs ORDER BY start_ns DESC LIMIT 1') } : {};
        let rows = 0;
        const s = await timed(reps, async () => (rows = (await runSavedQuery(db, q, params)).rows.length));
        const goal = name === 'critical-path' ? '' : `; goal < 500 ms: ${s.wall.median < 500 ? 'met' : 'NOT met'}`;
        console.log(`history: query ${name}${name === 'critical-path' ? ' (the newest run)' : ''} over ${n.toLocaleString()} runs: ${timedText(s)}, ${rows} rows; ${(s.wall.median / scan.wall.median).toFixed(1)}x the scan${goal}`);
      }
    } finally {
      db.close();
    }

    // A --db grows with each load: one more run (another project, so a trace of its own) into it.
    const one = path.join(dir, 'one.parquet');
    cli(['generate', '-o', one, '--runs', '1', '--nodes', String(nodes), '--seed', '6', '--no-detail']);
    const more = cli(['load', one, '--db', dbFile]);
    console.log(`history: load one more run into the ${runs.toLocaleString()}-run --db: ${(more.ms / 1000).toFixed(2)} s (process start included)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (k: string) => (process.argv.indexOf(k) > 0 ? Number(process.argv[process.argv.indexOf(k) + 1]) : undefined);
  await runHistoryBench({ runs: arg('--runs'), nodes: arg('--nodes') });
}
