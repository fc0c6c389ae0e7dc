/**
 * A run_results.json run onto the TelemetryWriter: one trace per file (trace_id from
 * metadata.invocation_id), compile/execute timings as RENDER/RUN NodeEvaluated spans, project hooks
 * in their ON_RUN_START/ON_RUN_END phases, nodes without timing (skips) placed after the results
 * listed before them. Times are planned first so phase spans can open before their nodes.
 */
import { createHash } from 'node:crypto';
import { InputError, errorMessage } from '../errors.js';
import type { NodeResult } from '../produce/node-attrs.js';
import type { Invocation, NodeTally, Phase, PhaseCounts, TelemetryWriter } from '../produce/writer.js';
import type { Attributes } from '../produce/record.js';
import { nearestUpstream, type Manifest } from './manifest.js';
import { CULPRIT_OUTCOMES, culpritOf, outcomeOf } from './outcome.js';
import { nodeInfo, resourceTypeOf } from './resource.js';
import type { LegacyResult, LegacyRun } from './run-results.js';
import { secondsToNs } from './time.js';
import { timed } from '../store/timing.js';

/** What a translated run became (run_results.json here; log-translator.ts adds what logs tell). */
export interface MigrateSummary {
  file?: string;
  traceId: string;
  invocationId: string;
  command: string;
  nodes: number;
  outcomes: Record<string, number>;
  /** upstream skips whose culprit could not be named (no manifest, or not found in it) */
  upstreamUnknown: number;
}

interface PlannedEval {
  phase: string;
  start: bigint;
  end: bigint;
  result: NodeResult;
}

interface PlannedNode {
  r: LegacyResult;
  start: bigint;
  end: bigint;
  evals: PlannedEval[];
}

const COMPILE_ONLY = new Set(['compile', 'generate', 'docs', 'show']);

/** Hooks run in their own phases; everything else in RENDER (compile) and RUN (execute). */
function mainPhase(r: LegacyResult, compileOnly: boolean): string {
  if (resourceTypeOf(r.uniqueId) === 'operation') {
    if (/on-run-start/.test(r.uniqueId)) return 'on_run_start';
    if (/on-run-end/.test(r.uniqueId)) return 'on_run_end';
  }
  return compileOnly ? 'render' : 'run';
}

/** invocation_id as given, or a stable UUID-shaped id from the file's results when it is missing. */
function invocationIdOf(run: LegacyRun): string {
  if (run.invocationId) return run.invocationId;
  const h = createHash('sha256').update(run.file).update(String(run.generatedAt)).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

interface Plan {
  /** each result's outcome, upstream culprit included */
  results: NodeResult[];
  compileOnly: boolean;
  start: bigint;
  end: bigint;
  /** per phase: first evaluation start, last evaluation end, evaluations */
  bounds: Map<string, { start: bigint; end: bigint; count: number }>;
}

function plan(run: LegacyRun, manifest: Manifest | undefined, summary: MigrateSummary): Plan {
  const command = run.command;
  const compileOnly = command !== null && COMPILE_ONLY.has(command);
  const outcomes = run.results.map((r, i) => {
    try {
      return outcomeOf({ status: r.status, resourceType: resourceTypeOf(r.uniqueId), message: r.message, command, failures: r.failures, rowsAffected: r.rowsAffected, failedBatches: r.failedBatches });
    } catch (e) {
      throw new InputError(errorMessage(e), run.file, undefined, `results[${i}].status`);
    }
  });
  const culprits = new Set<string>();
  run.results.forEach((r, i) => CULPRIT_OUTCOMES(outcomes[i]!.mapping) && culprits.add(r.uniqueId));
  const results = outcomes.map(({ mapping, result }, i) => {
    const r = run.results[i]!;
    if (mapping.skip_reason === 'upstream') {
      const up = culpritOf(r.uniqueId, r.message, culprits, manifest && ((id) => nearestUpstream(manifest, id, (x) => culprits.has(x))));
      if (up) result.upstreamUniqueId = up;
      else summary.upstreamUnknown++;
    }
    summary.outcomes[mapping.node_outcome] = (summary.outcomes[mapping.node_outcome] ?? 0) + 1;
    return result;
  });

  const elapsed = secondsToNs(run.elapsedS);
  let invStart = run.startedAt ?? (run.generatedAt !== null ? run.generatedAt - elapsed : null);
  for (const r of run.results) for (const t of r.timing) if (t.start !== null && (invStart === null || t.start < invStart)) invStart = t.start;
  invStart ??= 0n;
  // Phases open at their first evaluation, in time order, and close after their last.
  const bounds: Plan['bounds'] = new Map();
  let cursor = invStart;
  for (const n of planNodes(run, results, compileOnly, invStart)) {
    if (n.end > cursor) cursor = n.end;
    for (const e of n.evals) {
      const b = bounds.get(e.phase);
      if (!b) bounds.set(e.phase, { start: e.start, end: e.end, count: 1 });
      else {
        if (e.start < b.start) b.start = e.start;
        if (e.end > b.end) b.end = e.end;
        b.count++;
      }
    }
  }
  let invEnd = run.generatedAt ?? cursor;
  if (cursor > invEnd) invEnd = cursor;
  return { results, compileOnly, start: invStart, end: invEnd, bounds };
}

/**
 * Each node's evaluations in result order; nodes without timing (skips) start where the results
 * before them ended. A generator walked twice (phase bounds, then writing) so that the planned
 * nodes of a 100k-result run are never all held at once.
 */
function* planNodes(run: LegacyRun, results: NodeResult[], compileOnly: boolean, invStart: bigint): Generator<PlannedNode> {
  let cursor = invStart;
  for (let i = 0; i < run.results.length; i++) {
    const r = run.results[i]!;
    const result = results[i]!;
    const phase = mainPhase(r, compileOnly);
    // timings with both ends: the first compile and execute, and the earliest start and latest end
    let compile: Timed | undefined, execute: Timed | undefined, first: bigint | null = null, last: bigint | null = null;
    for (const t of r.timing) {
      if (t.start === null || t.end === null) continue;
      if (t.name === 'compile') compile ??= t as Timed;
      else if (t.name === 'execute') execute ??= t as Timed;
      if (first === null || t.start < first) first = t.start;
      if (last === null || t.end > last) last = t.end;
    }
    const evals: PlannedEval[] = [];
    if (first === null || last === null) {
      evals.push({ phase, start: cursor, end: cursor + secondsToNs(r.executionTime), result });
    } else if (phase !== 'run') {
      // compile-only commands and hooks: one evaluation spanning every timing
      evals.push({ phase, start: first, end: last, result });
    } else if (compile && execute) {
      evals.push({ phase: 'render', start: compile.start, end: compile.end, result: { outcome: 'success' } });
      evals.push({ phase: 'run', start: execute.start, end: execute.end, result });
    } else if (compile) {
      // only compiled: an error happened while compiling, anything else still ended here
      evals.push({ phase: 'render', start: compile.start, end: compile.end, result });
    } else {
      evals.push({ phase: 'run', start: first, end: last, result });
    }
    const start = evals[0]!.start;
    const end = evals.length === 1 || evals[0]!.end > evals[1]!.end ? evals[0]!.end : evals[1]!.end;
    if (end > cursor) cursor = end;
    yield { r, start, end, evals };
  }
}

type Timed = { name: string; start: bigint; end: bigint };

const EVAL_ARGS = ['select', 'exclude', 'selector', 'target', 'full_refresh', 'fail_fast', 'warn_error', 'indirect_selection', 'state', 'defer', 'threads'];

function evalArgs(args: Record<string, unknown>): Attributes {
  const a: Attributes = {};
  for (const k of EVAL_ARGS) {
    const v = args[k];
    if (v === undefined || v === null) continue;
    if (typeof v === 'string' || typeof v === 'boolean') a[k] = v;
    else if (typeof v === 'number') a[k] = String(v);
    else if (Array.isArray(v)) a[k] = v.map(String);
  }
  return a;
}

/** A run's nodes written by helper threads, after the ones the calling thread writes. */
export interface RunSplit {
  /** how many of the first nodes the calling thread writes itself */
  own: number;
  /**
   * Start writing the other nodes, under the run's already written process, invocation and phase
   * spans (`headIds`, in that order). `finish` resolves once their records follow the caller's in the
   * output, with their counts for the phase and invocation ends.
   */
  start(headIds: string[]): { finish(): Promise<PartCounts[]> };
}

/** What the nodes written elsewhere add to the phase and invocation ends. */
export interface PartCounts {
  phases: Record<string, PhaseCounts>;
  tallies: NodeTally[];
}

interface OpenRun {
  p: Plan;
  inv: Invocation;
  phases: Map<string, Phase>;
}

function newSummary(run: LegacyRun): MigrateSummary {
  return { file: run.file, traceId: '', invocationId: invocationIdOf(run), command: run.command ?? 'unknown', nodes: run.results.length, outcomes: {}, upstreamUnknown: 0 };
}

/** Write a planned run's head: process and invocation spans, then each phase's start. */
function openRun(w: TelemetryWriter, run: LegacyRun, p: Plan, summary: MigrateSummary): OpenRun {
  const command = summary.command;
  const inv = w.startInvocation({
    command, invocationId: summary.invocationId, at: p.start, rawCommand: run.rawCommand ?? `dbt ${command}`,
    evalArgs: { ...evalArgs(run.args), ...(run.dbtVersion ? { legacy_dbt_version: run.dbtVersion } : {}) },
  });
  summary.traceId = inv.traceId;
  const phases = new Map<string, Phase>();
  for (const [name, b] of [...p.bounds].sort((x, y) => (x[1].start < y[1].start ? -1 : x[1].start > y[1].start ? 1 : 0)))
    phases.set(name, inv.startPhase(name, { nodeCount: b.count, at: b.start }));
  return { p, inv, phases };
}

/** The span ids of a run's head, in the order a writer draws them (see replayIds). */
function headIds(o: OpenRun): string[] {
  return [o.inv.process.spanId, o.inv.spanId, ...[...o.phases.values()].map((ph) => ph.spanId)];
}

/**
 * Write nodes [from, to) of the run. The plan is walked from the first node even for a later part:
 * a node without timing starts where the nodes before it ended.
 */
async function writeNodes(w: TelemetryWriter, run: LegacyRun, manifest: Manifest | undefined, o: OpenRun, from: number, to: number): Promise<void> {
  let i = 0;
  for (const n of planNodes(run, o.p.results, o.p.compileOnly, o.p.start)) {
    if (i >= to) break;
    if (i++ < from) continue;
    const node = o.inv.startNode(nodeInfo(n.r.uniqueId, manifest?.nodes.get(n.r.uniqueId)), { at: n.start });
    for (const e of n.evals) node.evaluate(o.phases.get(e.phase)!, { at: e.start }).end(e.result, { at: e.end });
    node.end(undefined, { at: n.end });
    if (i % 2000 === 0) await w.drain();
  }
}

/**
 * Write one run through the writer (the caller owns and closes the writer). With `split`, helper
 * threads write the later nodes and this thread the first `split.own`.
 */
export async function migrateRun(w: TelemetryWriter, run: LegacyRun, manifest?: Manifest, split?: RunSplit): Promise<MigrateSummary> {
  const summary = newSummary(run);
  const o = openRun(w, run, plan(run, manifest, summary), summary);
  const n = run.results.length;
  const helpers = split && split.own < n ? split.start(headIds(o)) : undefined;
  await timed('migrate: nodes of this thread', () => writeNodes(w, run, manifest, o, 0, helpers ? split!.own : n));
  if (helpers) {
    await w.drain();
    for (const part of await helpers.finish()) {
      for (const [name, c] of Object.entries(part.phases)) o.phases.get(name)?.addCounted(c);
      for (const t of part.tallies) o.inv.tally(t);
    }
  }
  for (const [name, ph] of o.phases) ph.end({ at: o.p.bounds.get(name)!.end });
  o.inv.end({ at: o.p.end });
  await w.drain();
  return summary;
}

/** A run planned by a helper thread before it has the head's span ids (planning takes a while too). */
export interface PlannedPart {
  run: LegacyRun;
  manifest: Manifest | undefined;
  summary: MigrateSummary;
  plan: Plan;
}

export function planPart(run: LegacyRun, manifest: Manifest | undefined): PlannedPart {
  const summary = newSummary(run);
  return { run, manifest, summary, plan: plan(run, manifest, summary) };
}

/**
 * A helper thread's part of a run: nodes [from, to) under head spans re-created with the main
 * thread's ids (its writer must draw them first: replayIds). The head's own records are the main
 * thread's to write: the helper's sink drops them (see HEAD_EVENT_KEYS).
 */
export async function migrateRunPart(w: TelemetryWriter, part: PlannedPart, from: number, to: number): Promise<PartCounts> {
  const o = openRun(w, part.run, part.plan, part.summary);
  await writeNodes(w, part.run, part.manifest, o, from, to);
  await w.drain();
  const phases: Record<string, PhaseCounts> = {};
  for (const [name, ph] of o.phases) phases[name] = ph.counted;
  return { phases, tallies: [...o.inv.tallied] };
}

/** Event keys of a run's head spans, which only the main thread writes. */
export const HEAD_EVENT_KEYS: ReadonlySet<string> = new Set(['process.Process', 'invocation.Invocation', 'phase.PhaseExecuted']);
