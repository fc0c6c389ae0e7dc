/**
 * `migrate`: older-engine files (run_results.json, --log-format json streams) to telemetry in one
 * output. Each run gets its own TelemetryWriter (the engine version goes into its process span)
 * over one shared set of sinks. The kind of each input is told from its first line.
 */
import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import path from 'node:path';
import { InputError, errorMessage } from '../errors.js';
import { TelemetryWriter } from '../produce/writer.js';
import type { IdSource } from '../produce/ids.js';
import { readManifest, type Manifest } from './manifest.js';
import { migrateRun, type MigrateSummary } from './from-run-results.js';
import { translateLogFile, type LogFileReport } from './log-file.js';
import { readRunResults } from './run-results.js';
import { STDOUT } from '../produce/output-path.js';
import { openSinks, outFormat, type SharedSink } from './sinks.js';
import { jobsFor, RunHelpers } from './parallel-run.js';

export type InputKind = 'run_results' | 'log';

/** A JSON log stream has one object per line with `info` (1.4+) or `code` + `ts` (1.0-1.3). */
export function inputKind(file: string): InputKind {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new InputError(`cannot open: ${errorMessage(e)}`, file);
  }
  const buf = Buffer.alloc(1 << 16);
  const n = readSync(fd, buf, 0, buf.length, 0);
  closeSync(fd);
  if (file.endsWith('.gz')) return 'log';
  const first = buf.subarray(0, n).toString('utf8').trimStart().split('\n', 1)[0]!.trim();
  try {
    const o = JSON.parse(first) as Record<string, unknown>;
    if (o && typeof o === 'object' && ('info' in o || ('code' in o && 'ts' in o))) return 'log';
  } catch {
    /* not one object per line: a whole-file JSON document */
  }
  return 'run_results';
}

export interface MigrateOptions {
  out: string;
  manifest?: string;
  ids?: IdSource;
  otlp?: boolean;
  /** threads per run_results.json (default: up to 4 for files of 8 MiB and more; JSONL output only) */
  jobs?: number;
}

export type FileSummary = ({ kind: 'run_results' } & MigrateSummary) | ({ kind: 'log' } & LogFileReport);

export interface MigrateReport {
  out: string;
  records: number;
  files: FileSummary[];
  manifest: boolean;
  /** skipped nodes whose upstream culprit could not be named */
  upstreamUnknown: number;
}

/** A writer factory over shared sinks; sink failures of every writer are collected. */
export function writers(sinks: SharedSink[], ids?: IdSource): { writerFor: (version: string) => TelemetryWriter; errors: () => string[] } {
  const made: TelemetryWriter[] = [];
  return {
    writerFor: (version) => {
      const w = new TelemetryWriter({ sinks, ids, package: 'dbt', version });
      made.push(w);
      return w;
    },
    errors: () => [...new Set(made.flatMap((w) => [...w.sinkErrors].map(([s, e]) => `${s}: ${e.message}`)))],
  };
}

export async function migrateFiles(files: string[], o: MigrateOptions): Promise<MigrateReport> {
  const manifest: Manifest | undefined = o.manifest ? readManifest(o.manifest) : undefined;
  const kinds = files.map((f) => [f, inputKind(f)] as const);
  // Helper threads start first: they parse their file while this thread does.
  const helpers = new Map<number, RunHelpers>();
  // (helper threads write part files beside the output: not for stdout)
  const splittable = !o.otlp && o.out !== STDOUT && outFormat(o.out) === 'jsonl';
  const out: FileSummary[] = [];
  try {
    for (const [i, [f, kind]] of kinds.entries()) {
      const jobs = splittable && kind === 'run_results' ? jobsFor(f, o.jobs) : 1;
      if (jobs > 1) helpers.set(i, new RunHelpers(f, jobs, { out: path.resolve(o.out), manifest: o.manifest, ids: o.ids }));
    }
    const runs = kinds.map(([f, kind]) => (kind === 'run_results' ? readRunResults(f) : null));
    const sinks = await openSinks(o.out, { otlp: o.otlp });
    const { writerFor, errors } = writers(sinks, o.ids);
    const drain = () => Promise.all(sinks.map((s) => s.drain())).then(() => undefined);
    let complete = false;
    try {
      for (const [i, [f, kind]] of kinds.entries()) {
        if (kind === 'run_results') {
          const run = runs[i]!;
          const split = helpers.get(i)?.split(run.results.length, sinks[0]!);
          out.push({ kind, ...(await migrateRun(writerFor(run.dbtVersion ?? 'unknown'), run, manifest, split)) });
        } else out.push({ kind, ...(await translateLogFile(f, { manifest, writerFor }, drain)) });
      }
      complete = true;
    } finally {
      await Promise.all(sinks.map((s) => s.finish().catch(() => undefined)));
      // A translation that stopped on bad input leaves no half-written output to be mistaken for a result.
      if (!complete && o.out !== STDOUT) rmSync(path.resolve(o.out), { force: true });
    }
    return report(o, sinks, out, errors, manifest);
  } finally {
    await Promise.all([...helpers.values()].map((h) => h.abort()));
  }
}

function report(o: MigrateOptions, sinks: SharedSink[], out: FileSummary[], errors: () => string[], manifest: Manifest | undefined): MigrateReport {
  const failed = [...errors(), ...sinks.filter((s) => s.error).map((s) => `${s.name}: ${s.error!.message}`)];
  if (failed.length) throw new InputError(`writing failed: ${[...new Set(failed)].join('; ')}`, o.out);
  const upstreamUnknown = out.reduce((n, f) => n + (f.kind === 'run_results' ? f.upstreamUnknown : f.invocations.reduce((m, s) => m + s.upstreamUnknown, 0)), 0);
  return { out: o.out, records: sinks[0]!.records, files: out, manifest: manifest !== undefined, upstreamUnknown };
}
