/**
 * `migrate`: older-engine files (run_results.json, sources.json, --log-format json streams) to
 * telemetry in one output. Inputs are files, folders and globs, as for every reading command; each
 * file's kind is told from its content. Each run gets its own TelemetryWriter (the engine version
 * goes into its process span) over one shared set of sinks. Inputs are written in the order a load
 * reads them (logs last), and a run several inputs hold is written once (same-run.ts).
 */
import path from 'node:path';
import { InputError, OutputError, systemReason } from '../errors.js';
import { namedFiles } from '../ingest/detect.js';
import { TelemetryWriter } from '../produce/writer.js';
import type { IdSource } from '../produce/ids.js';
import { invocationIdOf, migrateRun, type MigrateSummary } from './from-run-results.js';
import { translateLogFile, type LogFileReport } from './log-file.js';
import { ManifestFinder, type ManifestUse } from './manifest-finder.js';
import { readRunResults } from './run-results.js';
import { notWritten, refuseOutputOverInput, STDOUT } from '../produce/output-path.js';
import { describeKind, headOf, sniffLegacy, type LegacyKind } from './sniff.js';
import { failedSink, openSinks, outFormat, type SharedSink } from './sinks.js';
import { jobsFor, RunHelpers } from './parallel-run.js';
import { idsFor, RunIds } from './span-ids.js';
import { logsLast, planSameRun, ScanSink, WrittenRecords, type InputPlan, type SpanEnding } from './same-run.js';
import type { LegacyRun } from './run-results.js';
import type { Manifest } from './manifest.js';
import type { TelemetrySink } from '../produce/sinks/types.js';
import { traceIdOf } from '../produce/ids.js';

export type InputKind = 'run_results' | 'sources' | 'log';

const READS = 'migrate reads run_results.json, sources.json and --log-format json logs';

/** Why a file is not an input of migrate, and what reads it. */
const isTelemetry = (text: string, binary: 'parquet' | null) => binary === 'parquet' || /^\s*\{\s*"(record_type|recordType)"/.test(text);

function notMigratable(text: string, binary: 'parquet' | null, kind: LegacyKind | undefined): string {
  if (isTelemetry(text, binary))
    return `already telemetry (${binary === 'parquet' ? 'Parquet' : 'JSONL'} records of the new engine): nothing to migrate; read it with runlens runs, tree, query, gate or explore`;
  if (kind === 'manifest') return `${describeKind(kind)} holds no run: give it with --manifest (it names the upstream of skipped nodes); ${READS}`;
  if (kind === 'artifact') return `${describeKind(kind)} holds no run; ${READS}`;
  if (/^\s*\{/.test(text)) return `not an older-engine file: a JSON object that is neither a run_results.json, a sources.json nor a JSON log line; ${READS}`;
  return `not an older-engine file: not JSON (a text log? the engine writes JSON logs with --log-format json or --log-format-file json); ${READS}`;
}

export interface MigrateOptions {
  out: string;
  /** manifest.json for every input; default: the one beside each run_results.json (manifest-finder.ts) */
  manifest?: string;
  ids?: IdSource;
  otlp?: boolean;
  /** threads per run_results.json (default: up to 4 for files of 8 MiB and more; JSONL output only) */
  jobs?: number;
  /** manifests already read (several translations of one load share them) */
  finder?: ManifestFinder;
  /** a damaged line of a log is skipped and listed instead of stopping (the reading commands' --lenient) */
  lenient?: boolean;
  /** the command has --lenient: the stopping message says so */
  lenientHint?: boolean;
}

export type FileSummary = (({ kind: 'run_results' | 'sources' } & MigrateSummary) | ({ kind: 'log' } & LogFileReport)) & { manifest: ManifestUse };

export interface MigrateReport {
  out: string;
  records: number;
  files: FileSummary[];
  /** skipped nodes whose upstream culprit could not be named */
  upstreamUnknown: number;
  /**
   * Runs that two or more inputs describe (a run_results.json and the log of the same invocation, a
   * copy of a file), files in the order written: the output holds one copy, the one the reading
   * commands keep reading the inputs in place (same-run.ts).
   */
  sameRun: { traceId: string; files: string[] }[];
  /** files named on their own that hold no run, and why */
  skipped: { path: string; reason: string }[];
  /** the OTLP export (--export-to-otlp) failed, though the output is complete: why, and what the endpoint did not get */
  exportFailed?: string;
}

/** A writer factory over shared sinks; sink failures of every writer are collected. */
export function writers(sinks: TelemetrySink[], ids?: IdSource): { writerFor: (version: string, seedKey: string) => TelemetryWriter; errors: () => string[] } {
  const made: TelemetryWriter[] = [];
  return {
    writerFor: (version, seedKey) => {
      const w = new TelemetryWriter({ sinks, ids: new RunIds(ids ?? idsFor(seedKey)), package: 'dbt', version });
      made.push(w);
      return w;
    },
    errors: () => [...new Set(made.flatMap((w) => [...w.sinkErrors].map(([s, e]) => `${s}: ${e.message}`)))],
  };
}

/**
 * The older-engine files named by PATH arguments. Other files are passed over in a folder or glob
 * (telemetry with the reason: its runs are not in the output); named on their own, a manifest.json or other artifact of the engine is skipped with the reason
 * (a shell glob names them), anything else is an error saying what it is.
 */
export async function legacyInputs(args: string[]): Promise<{ inputs: [string, InputKind][]; skipped: { path: string; reason: string }[] }> {
  const files = [...(await namedFiles(args)).keys()];
  const named = new Set(args);
  const inputs: [string, InputKind][] = [];
  const skipped: { path: string; reason: string }[] = [];
  for (const f of files) {
    const { text, binary } = headOf(f);
    const kind = binary ? undefined : sniffLegacy(text);
    if (kind === 'run-results' || kind === 'sources' || kind === 'log') inputs.push([f, kind === 'run-results' ? 'run_results' : kind]);
    else if (named.has(f) && (kind === 'manifest' || kind === 'artifact')) skipped.push({ path: f, reason: notMigratable(text, binary, kind) });
    else if (named.has(f)) throw new InputError(notMigratable(text, binary, kind), f);
    // telemetry in a folder or glob: not an input, but part of what was given (its runs are not in the output)
    else if (isTelemetry(text, binary)) skipped.push({ path: f, reason: notMigratable(text, binary, kind) });
  }
  if (inputs.length === 0) {
    if (skipped.length) throw new InputError(skipped[0]!.reason, skipped[0]!.path);
    throw new InputError(`no older-engine file found (${READS})`, args.join(', '));
  }
  return { inputs, skipped };
}

export async function migrateFiles(args: string[], o: MigrateOptions): Promise<MigrateReport> {
  const { inputs: kinds, skipped } = await legacyInputs(args);
  refuseOutputOverInput(o.out, [...kinds.map(([f]) => f), ...(o.manifest ? [o.manifest] : [])]);
  const manifests = o.finder ?? new ManifestFinder(o.manifest);
  // Helper threads start first: they parse their file while this thread does.
  const helpers = new Map<number, RunHelpers>();
  // (helper threads write part files beside the output: not for stdout)
  const splittable = !o.otlp && o.out !== STDOUT && outFormat(o.out) === 'jsonl';
  try {
    const uses = kinds.map(([f, kind]) => manifests.find(f, kind));
    for (const [i, [f, kind]] of kinds.entries()) {
      const jobs = splittable && kind === 'run_results' ? jobsFor(f, o.jobs) : 1;
      if (jobs > 1) helpers.set(i, new RunHelpers(f, jobs, { out: path.resolve(o.out), manifest: uses[i]!.path }));
    }
    const runs = kinds.map(([f, kind]) => (kind === 'log' ? null : readRunResults(f)));
    // written beside the output and put in its place when complete: a migrate that stops (bad input,
    // a full disk, a signal) leaves a file there as it was
    const sinks = await openSinks(o.out, { otlp: o.otlp, beside: true });
    const claim = sinks[0]!.claim;
    const made: ReturnType<typeof writers>[] = [];
    const errors = () => made.flatMap((m) => m.errors());
    const drain = () => Promise.all(sinks.map((s) => s.drain())).then(() => undefined);
    const hint = o.lenientHint ? ' (use --lenient to skip bad lines)' : undefined;
    // Written in the order a load reads them, so that the copy kept of a run several hold is the load's.
    const order = logsLast([...kinds.keys()], (i) => kinds[i]![1] === 'log');
    const out: FileSummary[] = new Array(kinds.length);
    let complete = false;
    try {
      const plans = kinds.length > 1 ? await sameRunPlans(kinds, runs, order, uses.map((u) => manifests.load(u)), sinks[0]!.minSeverity, { lenient: o.lenient, hint }) : null;
      for (const [p, i] of order.entries()) {
        const [f, kind] = kinds[i]!;
        const use = uses[i]!;
        const manifest = manifests.load(use);
        const plan = plans?.[p];
        const own = plan && plan.shared.size > 0 ? sinks.map((s) => plans!.written.sinkFor(s, plan)) : null;
        const ws = writers(own ?? sinks, o.ids);
        made.push(ws);
        if (kind !== 'log') {
          const run = runs[i]!;
          // (a run written through a filter is written by this thread alone: the helpers' parts bypass it)
          if (own) await helpers.get(i)?.abort();
          const split = own ? undefined : helpers.get(i)?.split(run.results.length, sinks[0]!);
          const w = ws.writerFor(run.dbtVersion ?? 'unknown', invocationIdOf(run));
          out[i] = { kind, manifest: use, ...(await migrateRun(w, run, manifest, split)) };
        } else out[i] = { kind, manifest: use, ...(await translateLogFile(f, { manifest, writerFor: ws.writerFor }, drain, { lenient: o.lenient, hint })) };
        for (const s of own ?? []) s.commit();
      }
      complete = true;
    } finally {
      await Promise.all(sinks.map((s) => s.finish().catch(() => undefined)));
      try {
        // A translation that stopped on bad input leaves no half-written output to be mistaken for a result.
        // Nor does an output that could not be written to its end (a full disk).
        if (complete && !sinks[0]?.error) claim?.commit();
      } catch (e) {
        throw notWritten(e, o.out, claim?.tmp);
      } finally {
        claim?.release();
      }
    }
    const r = report(o, sinks, out, errors);
    return { ...r, sameRun: sameRuns(order.map((i) => out[i]!)), skipped };
  } finally {
    await Promise.all([...helpers.values()].map((h) => h.abort()));
  }
}

function report(o: MigrateOptions, sinks: SharedSink[], out: FileSummary[], errors: () => string[]): Omit<MigrateReport, 'skipped' | 'sameRun'> {
  // the output itself failed (a full disk): said as any output that cannot be written
  const own = sinks[0]?.error;
  if (own && o.out !== STDOUT) {
    const told = notWritten(own, o.out, sinks[0]!.claim?.tmp);
    // (opening it failed: said as the system error on its path, as the other writers say it)
    if (told instanceof OutputError) throw told;
    if ((told as NodeJS.ErrnoException).path !== undefined) throw new InputError(systemReason(told), o.out);
  }
  const failed = [...new Set([...errors(), ...sinks.filter((s) => s.error).map((s) => `${s.name}: ${s.error!.message}`)])];
  const output = sinks[0]!.name;
  const ownFailed = failed.filter((f) => f.startsWith(`${output}: `));
  if (ownFailed.length) throw new InputError(`writing failed: ${ownFailed.map((f) => f.slice(output.length + 2)).join('; ')}`, o.out);
  const upstreamUnknown = out.reduce((n, f) => n + (f.kind !== 'log' ? f.upstreamUnknown : f.invocations.reduce((m, s) => m + s.upstreamUnknown, 0)), 0);
  const exportFailed = failed.length ? failed.map(failedSink).join('; ') : undefined;
  return { out: o.out, records: sinks[0]!.records, files: out, upstreamUnknown, ...(exportFailed ? { exportFailed } : {}) };
}

/**
 * For inputs in writing order: which traces each shares with others, and the ERROR statuses later
 * inputs give its spans (same-run.ts). A log's traces are known by translating it, so logs are
 * scanned; a run_results.json or sources.json names its own, and is scanned only when an earlier
 * input holds its run (a copy). Null when no two inputs hold the same run.
 */
async function sameRunPlans(
  kinds: [string, InputKind][], runs: (LegacyRun | null)[], order: number[], manifests: (Manifest | undefined)[], minSeverity: number,
  read: { lenient?: boolean; hint?: string },
): Promise<(InputPlan[] & { written: WrittenRecords }) | null> {
  const scan = async (i: number): Promise<ScanSink> => {
    const sink = new ScanSink(minSeverity);
    const { writerFor } = writers([sink]);
    const run = runs[i];
    if (run) await migrateRun(writerFor(run.dbtVersion ?? 'unknown', invocationIdOf(run)), run, manifests[i]);
    else await translateLogFile(kinds[i]![0], { manifest: manifests[i], writerFor }, () => Promise.resolve(), read);
    return sink;
  };
  const traces: Set<string>[] = [];
  const errors: (Map<string, SpanEnding> | undefined)[] = [];
  for (const i of order) {
    const run = runs[i];
    let t: Set<string>, e: Map<string, SpanEnding> | undefined;
    if (run && !traces.some((s) => s.has(traceIdOf(invocationIdOf(run))))) t = new Set([traceIdOf(invocationIdOf(run))]);
    else ({ traces: t, errors: e } = await scan(i));
    traces.push(t);
    errors.push(e);
  }
  const plans = planSameRun(traces, errors);
  return plans.some((p) => p.shared.size > 0) ? Object.assign(plans, { written: new WrittenRecords() }) : null;
}

function sameRuns(files: FileSummary[]): MigrateReport['sameRun'] {
  const filesOf = new Map<string, string[]>();
  for (const f of files) {
    for (const traceId of f.kind === 'log' ? f.invocations.map((i) => i.traceId) : [f.traceId]) {
      filesOf.set(traceId, [...(filesOf.get(traceId) ?? []), f.file ?? '-']);
    }
  }
  return [...filesOf].filter(([, fs]) => fs.length > 1).map(([traceId, fs]) => ({ traceId, files: fs }));
}
