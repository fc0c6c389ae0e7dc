/**
 * Producer bench: generate + write JSONL, and Parquet writing beside DuckDB's own
 * `COPY ... (FORMAT parquet)` of the same rows, measured in the same run.
 * Run alone: `npm run build && node dist/bench/produce.js [--nodes N]`.
 * Figures are wall-clock and CPU time of this process (the machine may be shared; rows per
 * CPU-second is the steadier per-core figure, and the load average is printed beside them).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { buildProject, DEFAULT_START, generate, simulateRun } from '../src/produce/generate/index.js';
import { seededIds } from '../src/produce/ids.js';
import { JsonlSink } from '../src/produce/sinks/jsonl.js';
import { CountingSink } from '../src/produce/sinks/counting.js';
import { TelemetryWriter } from '../src/produce/writer.js';
import { readJsonlRecords } from '../src/produce/jsonl-io.js';
import { writeParquetFile } from '../src/produce/parquet-writer.js';
import type { JsonlRecord } from '../src/produce/record.js';

export interface ProduceBenchResult {
  generateJsonl: Measure;
  writerJsonl: Measure;
  parquetWriteCold: Measure;
  parquetWrite: Measure;
  duckdbCopy1Thread: Measure;
  duckdbCopyAllThreads: Measure;
  ratioToDuckdb1Thread: number;
}

interface Measure {
  records: number;
  wallMs: number;
  cpuMs: number;
  bytes: number;
}

async function measure(fn: () => Promise<number>, out: string): Promise<Measure> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const records = await fn();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { records, wallMs, cpuMs: (c.user + c.system) / 1000, bytes: statSync(out).size };
}

const rate = (m: Measure, by: 'wallMs' | 'cpuMs') => Math.round(m.records / (m[by] / 1000));
const fmt = (n: number) => n.toLocaleString('en-US');

function line(name: string, m: Measure, goal?: string): string {
  return `${name.padEnd(34)} ${fmt(m.records).padStart(10)} rows  ${(m.wallMs / 1000).toFixed(2).padStart(7)} s  ${fmt(rate(m, 'wallMs')).padStart(10)} rows/s wall  ${fmt(rate(m, 'cpuMs')).padStart(10)} rows/cpu-s  ${(m.bytes / 1e6).toFixed(1).padStart(7)} MB${goal ? `  (${goal})` : ''}`;
}

export async function runProduceBench(opts: { nodes?: number; log?: (s: string) => void } = {}): Promise<ProduceBenchResult> {
  const log = opts.log ?? ((s: string) => process.stdout.write(s + '\n'));
  const dir = mkdtempSync(join(tmpdir(), 'runlens-bench-produce-'));
  try {
    const nodes = opts.nodes ?? 40_000;
    const jsonl = join(dir, 'gen.jsonl');
    const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
    log(`producer bench: generate --nodes ${fmt(nodes)} (one build run), then Parquet of the same records; load average ${load()}`);
    const gen = await measure(async () => (await generate({ output: jsonl, nodes, runs: 1, seed: 42, failRate: 0.02 })).records, jsonl);
    log(line('generate + write JSONL', gen, 'goal >= 200,000 rows/s'));
    // The same run with the synthetic project built beforehand: the writer and the JSONL sink
    // (plus the simulation driving them) without the project's DAG construction.
    const project = buildProject(nodes, 42, 'acme');
    const jsonl2 = join(dir, 'writer.jsonl');
    const writerOnly = await measure(async () => {
      const sink = new CountingSink(new JsonlSink({ path: jsonl2, append: false, level: 'trace' }));
      const w = new TelemetryWriter({ sinks: [sink], ids: seededIds(42), version: '2.0.0-preview.120', hostOs: 'linux', hostArch: 'x86_64' });
      await simulateRun(w, project, {
        seed: 42, runIndex: 0, failRate: 0.02, cacheRate: 0.1, threads: 8, start: DEFAULT_START, adapterType: 'duckdb', version: '2.0.0-preview.120', detail: true,
      });
      await w.close();
      return sink.records;
    }, jsonl2);
    log(line('  of which writer + JSONL sink', writerOnly, 'project prebuilt'));

    // Parquet: records already in memory, so only the writer is timed.
    const records: JsonlRecord[] = [];
    for await (const r of readJsonlRecords(jsonl)) records.push(r);
    const pq = join(dir, 'ours.parquet');
    // The first write in a process pays JIT warm-up and hashes every string once; the second shows the steady rate.
    const cold = await measure(async () => (await writeParquetFile(records, pq)).records, pq);
    log(line('writeParquetFile, first in process', cold));
    const ours = await measure(async () => (await writeParquetFile(records, pq)).records, pq);
    log(line('writeParquetFile, warm', ours, 'goal >= 300,000 rows/s per core'));

    // DuckDB baseline: the same rows in a DuckDB table (read from our file, so same columns), then COPY.
    const inst = await DuckDBInstance.create(':memory:');
    const con = await inst.connect();
    await con.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${pq.replace(/'/g, "''")}')`);
    const copy = async (threads: number | null, name: string): Promise<Measure> => {
      await con.run(threads ? `SET threads = ${threads}` : 'RESET threads');
      const out = join(dir, name);
      return measure(async () => {
        await con.run(`COPY t TO '${out.replace(/'/g, "''")}' (FORMAT parquet, COMPRESSION snappy)`);
        return records.length;
      }, out);
    };
    const d1 = await copy(1, 'duck1.parquet');
    const dn = await copy(null, 'duckn.parquet');
    con.closeSync();
    inst.closeSync();
    log(line('DuckDB COPY, 1 thread', d1));
    log(line('DuckDB COPY, all threads', dn));
    const ratio = ours.wallMs / d1.wallMs;
    log(`writeParquetFile (warm) / DuckDB COPY (1 thread): wall ${ratio.toFixed(2)}x (goal <= 1.5x), CPU ${(ours.cpuMs / d1.cpuMs).toFixed(2)}x; first write: wall ${(cold.wallMs / d1.wallMs).toFixed(2)}x; load average ${load()}`);
    return { generateJsonl: gen, writerJsonl: writerOnly, parquetWriteCold: cold, parquetWrite: ours, duckdbCopy1Thread: d1, duckdbCopyAllThreads: dn, ratioToDuckdb1Thread: ratio };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--nodes');
  await runProduceBench({ nodes: i > 0 ? Number(process.argv[i + 1]) : undefined });
}
