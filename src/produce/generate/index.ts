/**
 * `generate`: realistic runs of a synthetic project through TelemetryWriter into JSONL or Parquet,
 * streamed to disk, deterministic for a seed.
 */
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { keyedIds } from '../ids.js';
import { claimOutput, type OutputClaim } from '../output-claim.js';
import { notWritten, STDOUT } from '../output-path.js';
import { JsonlSink, jsonlSinkPath } from '../sinks/jsonl.js';
import { ParquetSink, parquetSinkPath } from '../sinks/parquet.js';
import type { TelemetrySink } from '../sinks/types.js';
import { CountingSink } from '../sinks/counting.js';
import { TelemetryWriter } from '../writer.js';
import { buildProject } from './project.js';
import { simulateRun, type RunSummary } from './run.js';

export interface GenerateOptions {
  /** a file path (a bare name goes under logs/ or target/metadata/, like the engine's), or '-' for JSONL on stdout */
  output: string;
  format?: 'jsonl' | 'parquet';
  runs?: number;
  nodes?: number;
  seed?: number;
  failRate?: number;
  cacheRate?: number;
  threads?: number;
  /** ISO time or ns of the first run's start (default 2026-03-02T09:00:00Z); later runs follow */
  start?: bigint;
  /** project name in unique ids */
  project?: string;
  adapterType?: string;
  /** include DEBUG detail: CompiledCode and user log lines (default true) */
  detail?: boolean;
  /** called after each RUN-phase node with (nodes done, nodes total) */
  onProgress?: (done: number, total: number) => void;
}

export interface GenerateResult {
  output: string;
  format: 'jsonl' | 'parquet';
  runs: RunSummary[];
  records: number;
}

export const DEFAULT_START = 1_772_442_000_000_000_000n; // 2026-03-02T09:00:00Z

export async function generate(o: GenerateOptions): Promise<GenerateResult> {
  const format = o.format ?? (o.output.toLowerCase().endsWith('.parquet') ? 'parquet' : 'jsonl');
  if (o.output === STDOUT && format === 'parquet') throw new UsageError('Parquet cannot be written to stdout; name a .parquet file');
  // A file is locked against other writers; JSONL is written beside it and renamed when complete
  // (the Parquet writer does that itself), so a stopped or failed generate leaves a file there as it was.
  const claim: OutputClaim | undefined =
    o.output === STDOUT ? undefined : claimOutput(path.resolve(format === 'parquet' ? parquetSinkPath(o.output) : jsonlSinkPath(o.output)), { beside: format === 'jsonl' });
  try {
    return await generateTo(claim, o, format);
  } finally {
    claim?.release();
  }
}

async function generateTo(claim: OutputClaim | undefined, o: GenerateOptions, format: 'jsonl' | 'parquet'): Promise<GenerateResult> {
  const seed = o.seed ?? 1;
  const runs = Math.max(1, o.runs ?? 1);
  const version = '2.0.0-preview.120';
  const nodes = o.nodes ?? 50;
  const projectName = o.project ?? 'acme';
  const failRate = o.failRate ?? 0.02;
  const cacheRate = o.cacheRate ?? 0.1;
  const threads = o.threads ?? 8;
  const detail = o.detail ?? true;
  const adapterType = o.adapterType ?? 'duckdb';
  let start = o.start ?? DEFAULT_START;
  const project = buildProject(nodes, seed, projectName);
  // Generated files hold everything (trace level), like --log-level-file trace.
  const inner: TelemetrySink =
    !claim ? new JsonlSink({ stream: process.stdout, level: 'trace' })
    : format === 'parquet' ? new ParquetSink({ path: claim.writePath, level: 'trace' })
    : new JsonlSink({ path: claim.writePath, append: false, level: 'trace' });
  const sink = new CountingSink(inner);
  let sinkError: Error | undefined;
  const writer = new TelemetryWriter({
    sinks: [sink], ids: keyedIds(idKey({ seed, nodes, projectName, failRate, cacheRate, threads, detail, adapterType, start, version })), version, hostOs: 'linux', hostArch: 'x86_64',
    onSinkError: (_s, e) => (sinkError ??= e),
  });
  const total = project.nodes.length * runs;
  let done = 0;
  const summaries: RunSummary[] = [];
  for (let r = 0; r < runs; r++) {
    summaries.push(
      await simulateRun(writer, project, {
        seed, runIndex: r, failRate, cacheRate, threads, start,
        adapterType, version, detail, onNode: () => o.onProgress?.(++done, total),
      }),
    );
    start += 6n * 3600n * 1_000_000_000n; // next run six hours later
    if (sinkError) break;
  }
  await writer.close();
  if (sinkError) throw notWritten(sinkError, o.output, claim?.tmp);
  claim?.commit();
  return { output: o.output, format, runs: summaries, records: sink.records };
}

/**
 * The key of a generation's ids: the seed and every option that shapes a run's records, so runs that
 * differ never share a trace id (loading two files would merge them into one run that never
 * happened). Not `runs` (the first runs are the same whatever their number) nor the format (the same
 * records either way): those files hold the same runs, and a load keeps one copy.
 */
function idKey(k: { seed: number; nodes: number; projectName: string; failRate: number; cacheRate: number; threads: number; detail: boolean; adapterType: string; start: bigint; version: string }): string {
  return JSON.stringify({ ...k, start: String(k.start) });
}

export { buildProject, type GenProject, type GenNode } from './project.js';
export { simulateRun, type RunOptions, type RunSummary } from './run.js';
