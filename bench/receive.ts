/**
 * Receiver bench (issue 7): spans per second sustained over loopback, client (our OTLP sink, batches
 * of 512, in its own process) and receiver in the same run, beside DuckDB's own load of the same
 * records from JSONL. Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/receive.js`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { OtlpReceiver } from '../src/ingest/otlp-receiver.js';
import { generate } from '../src/produce/generate/index.js';
import { loadPaths, openModel } from '../src/store/load.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function runReceiveBench(opts: { nodes?: number } = {}): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-rx-'));
  try {
    const jsonl = path.join(dir, 'run.jsonl');
    const g = await generate({ output: jsonl, runs: 1, nodes: opts.nodes ?? 30_000, seed: 3, failRate: 0.01, detail: false });
    const base = await openModel();
    let t = performance.now();
    await loadPaths(base, [jsonl]);
    const loadMs = performance.now() - t;
    const spans = await base.scalar<number>('SELECT count(*)::INTEGER FROM spans');
    const logs = await base.scalar<number>(`SELECT count(*)::INTEGER FROM logs`);
    base.close();

    const db = await openModel();
    const rx = new OtlpReceiver({ db, port: 0 });
    await rx.start();
    t = performance.now();
    await promisify(execFile)(process.execPath, [path.join(here, 'receive-client.js'), jsonl, rx.url], { maxBuffer: 1 << 20 });
    const sentMs = performance.now() - t;
    await rx.close();
    const totalMs = performance.now() - t;
    const got = await db.scalar<number>('SELECT count(*)::INTEGER FROM spans');
    db.close();
    console.log(`receive: ${g.records.toLocaleString()} generated records = ${spans.toLocaleString()} spans + ${logs.toLocaleString()} logs; ${got.toLocaleString()} spans in the model after the stream`);
    console.log(`receive: ${Math.round(spans / (totalMs / 1000)).toLocaleString()} spans/s end to end (client send ${(sentMs / 1000).toFixed(2)} s, through the model ${(totalMs / 1000).toFixed(2)} s; goal >= 50,000 spans/s)`);
    console.log(`receive: baseline: DuckDB load of the same run from JSONL ${(loadMs / 1000).toFixed(2)} s = ${Math.round(g.records / (loadMs / 1000)).toLocaleString()} records/s`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runReceiveBench();
