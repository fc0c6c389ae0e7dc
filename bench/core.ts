/**
 * Core bench (issue 2): load of >= 1M generated records (JSONL and Parquet) beside raw DuckDB reads of
 * the same file in the same run, saved queries on the loaded model, tree of one large trace, peak RSS.
 * Each step runs in its own process (bench/core-child.ts) so its peak RSS is its own.
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/core.js [--records 1000000]`.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generate } from '../src/produce/generate/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function child(task: string, file: string, trace?: string): Record<string, unknown> & { ms?: number; maxRssMB: number } {
  // The same young-generation size as the runlens program (its shebang) and `npm run bench`.
  const out = execFileSync(process.execPath, ['--max-semi-space-size=32', path.join(here, 'core-child.js'), task, file, ...(trace ? [trace] : [])], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  return JSON.parse(out.trim().split('\n').pop()!);
}

/**
 * Baseline and ours alternated `reps` times: the VM's speed moves by tens of percent from minute to
 * minute, so each ratio compares neighbours. Reports the best time of each and the median ratio.
 */
function paired(rawTask: string, file: string, reps = 5, tunedTask?: string) {
  const raws: ReturnType<typeof child>[] = [];
  const tuned: ReturnType<typeof child>[] = [];
  const ours: ReturnType<typeof child>[] = [];
  const ratios: number[] = [];
  const tunedRatios: number[] = [];
  // Not counted: the first read of a file just written ran slower (the kernel still writing it back),
  // which made the first pair's ratio 1.0-1.1x against 1.7-2.2x for the others.
  child(rawTask, file);
  for (let i = 0; i < reps; i++) {
    const r = child(rawTask, file);
    const o = child('load', file);
    raws.push(r);
    ours.push(o);
    ratios.push(o.ms! / r.ms!);
    if (tunedTask) {
      const t = child(tunedTask, file);
      tuned.push(t);
      tunedRatios.push(o.ms! / t.ms!);
    }
  }
  const best = (xs: ReturnType<typeof child>[]) => xs.reduce((a, b) => ((b.ms ?? Infinity) < (a.ms ?? Infinity) ? b : a));
  // (on a copy: the pairs are reported in the order they ran)
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ms = (xs: ReturnType<typeof child>[]) => xs.map((x) => x.ms!);
  return {
    raw: best(raws), ours: best(ours), ratio: median(ratios), ratios, oursMs: ms(ours), baseMs: ms(raws),
    tuned: tuned.length ? { best: best(tuned), ratio: median(tunedRatios), ratios: tunedRatios, oursMs: ms(ours), baseMs: ms(tuned) } : undefined,
  };
}

/**
 * Write a just-generated file out to disk before anything is measured: the kernel otherwise writes its
 * pages back 30 s after they were written, in the middle of the pairs (1 GB of JSONL), and that
 * writeback took CPU from the measured loads (three pairs of one run: 1.41x, 1.77x, 2.27x).
 */
function flushToDisk(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Every pair in the order it ran: ratio (ours / baseline, in seconds). */
const ratioText = (p: { ratios: number[]; oursMs: number[]; baseMs: number[] }) =>
  `pairs in order ${p.ratios.map((r, i) => `${r.toFixed(2)}x (${(p.oursMs[i]! / 1000).toFixed(2)}/${(p.baseMs[i]! / 1000).toFixed(2)})`).join(', ')}`;

export async function runCoreBench(opts: { records?: number } = {}): Promise<void> {
  const target = opts.records ?? 1_000_000;
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-core-'));
  try {
    // ~100k spans in the biggest trace: one large run plus smaller ones up to the record target.
    const jsonl = path.join(dir, 'gen.jsonl');
    const parquet = path.join(dir, 'gen.parquet');
    let t = performance.now();
    const big = await generate({ output: jsonl, runs: 1, nodes: 20_000, seed: 7, failRate: 0.01 });
    const perRun = big.records;
    const runs = Math.max(2, Math.ceil(target / perRun));
    const g = await generate({ output: jsonl, runs, nodes: 20_000, seed: 7, failRate: 0.01 });
    const genMs = performance.now() - t;
    t = performance.now();
    await generate({ output: parquet, runs, nodes: 20_000, seed: 7, failRate: 0.01 });
    const genPqMs = performance.now() - t;
    for (const f of [jsonl, parquet]) flushToDisk(f);
    const sizeMB = statSync(jsonl).size / 2 ** 20;
    console.log(`core: generated ${g.records.toLocaleString()} records in ${runs} runs: JSONL ${sizeMB.toFixed(0)} MB (${(genMs / 1000).toFixed(1)} s), Parquet ${(statSync(parquet).size / 2 ** 20).toFixed(0)} MB (${(genPqMs / 1000).toFixed(1)} s)`);

    const pj = paired('raw-jsonl', jsonl, 5, 'raw-jsonl-tuned');
    const rawJ = pj.raw;
    const ourJ = pj.ours;
    const perCore = g.records / (ourJ.ms! / 1000) / 2;
    console.log(`core: JSONL load best ${(ourJ.ms! / 1000).toFixed(2)} s vs raw read_json CTAS best ${(rawJ.ms! / 1000).toFixed(2)} s; median ratio ${pj.ratio.toFixed(2)}x (goal <= 1.5x; ${ratioText(pj)}); ${Math.round(perCore).toLocaleString()} records/s per core (goal >= 250,000)`);
    // The same raw read with runlens's DuckDB settings (its block allocator) and JSON buffer size: how much of the ratio those make.
    if (pj.tuned) console.log(`core: JSONL raw read_json CTAS with runlens's DuckDB settings and buffer size best ${(pj.tuned.best.ms! / 1000).toFixed(2)} s; our load's median ratio to it ${pj.tuned.ratio.toFixed(2)}x (${ratioText(pj.tuned)})`);
    console.log(`core: JSONL load peak RSS ${ourJ.maxRssMB.toFixed(0)} MB = ${(ourJ.maxRssMB / sizeMB).toFixed(2)}x the file (goal < 2x); raw CTAS peak RSS ${rawJ.maxRssMB.toFixed(0)} MB`);
    const pp = paired('raw-parquet', parquet);
    console.log(`core: Parquet load best ${(pp.ours.ms! / 1000).toFixed(2)} s vs raw read_parquet CTAS best ${(pp.raw.ms! / 1000).toFixed(2)} s; median ratio ${pp.ratio.toFixed(2)}x (goal <= 1.5x; ${ratioText(pp)})`);
    const q = child('queries', jsonl) as unknown as { queries: Record<string, number> };
    for (const [name, ms] of Object.entries(q.queries)) console.log(`core: query ${name}: ${ms.toFixed(0)} ms on ${g.records.toLocaleString()} records (goal < 300 ms)`);
    const tr = child('tree', jsonl);
    console.log(`core: tree of one trace with ${Number(tr.spans).toLocaleString()} spans: ${tr.ms!.toFixed(0)} ms (goal < 1000 ms)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--records');
  await runCoreBench({ records: i > 0 ? Number(process.argv[i + 1]) : undefined });
}
