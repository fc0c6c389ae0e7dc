/**
 * A run_results.json (or sources.json) run onto the TelemetryWriter: one trace per file (trace_id
 * from metadata.invocation_id), compile/execute timings as RENDER/RUN NodeEvaluated spans, project
 * hooks in their ON_RUN_START/ON_RUN_END phases, nodes without timing (skips) placed where the
 * results listed before them ended, inside the run's window (generated_at - elapsed_time ..
 * generated_at). Times are planned first so phase spans can open before their nodes.
 * Span ids are derived from what each span stands for, and a node's event ids from the node
 * (span-ids.ts), so a run is written the same way by one thread or several, and matches the span
 * ids its log's translation gives.
 */
import { createHash } from 'node:crypto';
import { InputError, errorMessage } from '../errors.js';
import { traceIdOf } from '../produce/ids.js';
import type { NodeResult } from '../produce/node-attrs.js';
import type { Invocation, NodeTally, Phase, PhaseCounts, TelemetryWriter } from '../produce/writer.js';
import type { Attributes } from '../produce/record.js';
import { timed } from '../store/timing.js';
import { isCompileOnlyCommand } from '../telemetry/status-map.js';
import { upstreamSearch, type Manifest } from './manifest.js';
import { CULPRIT_OUTCOMES, culpritOf, outcomeOf } from './outcome.js';
import { nodeInfo, resourceTypeOf } from './resource.js';
import type { Freshness, LegacyResult, LegacyRun } from './run-results.js';
import { RunIds, RunSpanIds } from './span-ids.js';
import { secondsToNs } from './time.js';

/** What a translated run became (run_results.json here; log-translator.ts adds what logs tell). */
export interface MigrateSummary {
  file?: string;
  traceId: string;
  invocationId: string;
  command: string;
  nodes: number;
  outcomes: Record<string, number>;
  /** tests that ran, by test outcome (passed, warned, failed) */
  tests: Record<string, number>;
  /** sources.json: sources by freshness outcome (passed, warned, failed) */
  freshness: Record<string, number>;
  /** upstream skips whose culprit could not be named (no manifest, or not found in it) */
  upstreamUnknown: number;
  /** with a manifest: how many of the run's nodes it has (none: the manifest of another project) */
  inManifest?: number;
  /** run_results.json: nodes whose timing lies far outside the run, read as nodes without timing */
  outsideRun?: string[];
}

/** What to say of a run's nodes whose timing lies far outside it, if there are any. */
export function outsideRunNote(s: MigrateSummary): string | null {
  const ids = s.outsideRun ?? [];
  if (!ids.length) return null;
  const more = ids.length > 1 ? ` and ${ids.length - 1} more node${ids.length > 2 ? 's' : ''}` : '';
  return `the timing of ${ids[0]}${more} lies outside the run (generated_at - elapsed_time .. generated_at): read as ${ids.length > 1 ? 'nodes' : 'a node'} without timing`;
}

export function newSummary(traceId: string, invocationId: string, command: string): MigrateSummary {
  return { traceId, invocationId, command, nodes: 0, outcomes: {}, tests: {}, freshness: {}, upstreamUnknown: 0 };
}

/** Count one node's outcome into a summary. */
export function countOutcome(s: MigrateSummary, m: { node_outcome: string; test_outcome: string | null; freshness_outcome?: string }): void {
  s.outcomes[m.node_outcome] = (s.outcomes[m.node_outcome] ?? 0) + 1;
  if (m.test_outcome) s.tests[m.test_outcome] = (s.tests[m.test_outcome] ?? 0) + 1;
  if (m.freshness_outcome) s.freshness[m.freshness_outcome] = (s.freshness[m.freshness_outcome] ?? 0) + 1;
}

interface PlannedEval {
  phase: string;
  start: bigint;
  end: bigint;
  result: NodeResult;
}

interface PlannedNode {
  r: LegacyResult;
  /** the node's span key: its unique_id, made unique within the run if a file repeats one */
  key: string;
  start: bigint;
  end: bigint;
  evals: PlannedEval[];
}

/**
 * How far outside the run (generated_at - elapsed_time .. generated_at) a node's timing may lie
 * before it is not believed: the engine times both with one clock, so only a file edited by hand
 * or a clock that jumped puts a timing outside it.
 */
const SLACK_NS = 1_000_000_000n;
/** The phases of the older engine in the order they run: each node compiles (RENDER) before it executes (RUN). */
const PHASE_ORDER = ['on_run_start', 'render', 'run', 'on_run_end'];
/** Nanoseconds between the invocation's start and its first node, room for the phases to open in order. */
const HEAD_NS = BigInt(PHASE_ORDER.length * 2);

/** Hooks run in their own phases; everything else in RENDER (compile) and RUN (execute). */
function mainPhase(r: LegacyResult, compileOnly: boolean): string {
  if (resourceTypeOf(r.uniqueId) === 'operation') {
    if (/on-run-start/.test(r.uniqueId)) return 'on_run_start';
    if (/on-run-end/.test(r.uniqueId)) return 'on_run_end';
  }
  return compileOnly ? 'render' : 'run';
}

/**
 * invocation_id as given, or a stable UUID-shaped id from the file's content when it is missing or
 * is not a UUID (not from its path: the same file read from two places is one run).
 */
export function invocationIdOf(run: LegacyRun): string {
  if (run.invocationId) {
    try {
      traceIdOf(run.invocationId);
      return run.invocationId;
    } catch {
      /* hand-edited: derived below */
    }
  }
  const h = createHash('sha256').update(`${run.invocationId}|${run.generatedAt}|${run.elapsedS}|${run.results.length}`);
  for (const r of run.results.slice(0, 16)) h.update(`|${r.uniqueId}`);
  const x = h.digest('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** When the run was, as its metadata says: from its start (or generated_at - elapsed_time) to generated_at. */
interface RunWindow {
  start: bigint;
  end: bigint;
}

function windowOf(run: LegacyRun): RunWindow | null {
  if (run.generatedAt === null) return null;
  const start = run.startedAt ?? (run.elapsedS !== null ? run.generatedAt - secondsToNs(run.elapsedS) : null);
  return start === null || start > run.generatedAt ? null : { start, end: run.generatedAt };
}

/** Whether a result's timing lies far outside the run. */
function outside(r: LegacyResult, w: RunWindow | null): boolean {
  return w !== null && r.timing.some((t) => (t.start !== null && t.start < w.start - SLACK_NS) || (t.end !== null && t.end > w.end + SLACK_NS));
}

interface Plan {
  /** each result's outcome, upstream culprit included */
  results: NodeResult[];
  compileOnly: boolean;
  start: bigint;
  end: bigint;
  window: RunWindow | null;
  /** results whose timing is not believed (outside the run): placed as results without timing */
  untimed: Set<number>;
  /** per phase: first evaluation start, last evaluation end, evaluations */
  bounds: Map<string, { start: bigint; end: bigint; count: number }>;
}

function plan(run: LegacyRun, manifest: Manifest | undefined, summary: MigrateSummary): Plan {
  const command = run.command;
  const compileOnly = command !== null && isCompileOnlyCommand(command);
  const outcomes = run.results.map((r, i) => {
    try {
      return outcomeOf({
        status: r.status, resourceType: resourceTypeOf(r.uniqueId), message: r.message, command, failures: r.failures, rowsAffected: r.rowsAffected,
        failedBatches: r.failedBatches, freshnessAgeS: r.freshness?.ageS,
      });
    } catch (e) {
      throw new InputError(errorMessage(e), run.file, undefined, `results[${i}].status`);
    }
  });
  const culprits = new Set<string>();
  // (a result without unique_id names no upstream: its key is no node's id)
  run.results.forEach((r, i) => !r.noUniqueId && CULPRIT_OUTCOMES(outcomes[i]!.mapping) && culprits.add(r.uniqueId));
  if (manifest) summary.inManifest = run.results.filter((r) => manifest.nodes.has(r.uniqueId)).length;
  const results = outcomes.map(({ mapping, result }, i) => {
    const r = run.results[i]!;
    if (mapping.skip_reason === 'upstream') {
      const up = culpritOf(r.uniqueId, r.message, culprits, upstreamSearch(manifest, r.uniqueId, (x) => culprits.has(x)));
      if (up) result.upstreamUniqueId = up;
      else summary.upstreamUnknown++;
    }
    countOutcome(summary, mapping);
    return result;
  });

  const window = windowOf(run);
  const untimed = new Set<number>();
  run.results.forEach((r, i) => outside(r, window) && untimed.add(i));
  if (untimed.size) summary.outsideRun = [...untimed].map((i) => run.results[i]!.uniqueId);
  let invStart = window?.start ?? run.startedAt;
  let firstTiming: bigint | null = null;
  run.results.forEach((r, i) => {
    if (!untimed.has(i)) for (const t of r.timing) if (t.start !== null && (firstTiming === null || t.start < firstTiming)) firstTiming = t.start;
  });
  // The tree orders spans by start: the invocation opens before its phases, which open before their
  // first node (see phaseStarts).
  if (firstTiming !== null && (invStart === null || firstTiming - HEAD_NS < invStart)) invStart = firstTiming - HEAD_NS;
  if (invStart === null) {
    // no window and no timing: the run is placed before the file was written, with room for its nodes end to end
    if (run.generatedAt === null) {
      throw new InputError('the file does not say when the run was: no generated_at and no result with timing', run.file, undefined, 'metadata.generated_at');
    }
    invStart = run.generatedAt - run.results.reduce((took, r) => took + secondsToNs(r.executionTime), 0n) - HEAD_NS;
  }
  const bounds: Plan['bounds'] = new Map();
  const p: Plan = { results, compileOnly, start: invStart, end: invStart, window, untimed, bounds };
  let cursor = invStart;
  for (const n of planNodes(run, p)) {
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
  p.end = window?.end ?? cursor;
  if (cursor > p.end) p.end = cursor;
  return p;
}

/**
 * Each node's evaluations in result order. Results are listed in the order nodes finished, so a
 * node without timing (skips, errors of old versions) ends where the results before it ended,
 * having run its execution_time, and inside the run. A generator walked twice (phase bounds, then
 * writing) so that the planned nodes of a 100k-result run are never all held at once.
 */
function* planNodes(run: LegacyRun, p: Pick<Plan, 'results' | 'compileOnly' | 'start' | 'window' | 'untimed'>): Generator<PlannedNode> {
  const low = p.start + HEAD_NS;
  let cursor = low;
  const seen = new Map<string, number>();
  for (let i = 0; i < run.results.length; i++) {
    const r = run.results[i]!;
    const result = p.results[i]!;
    const phase = mainPhase(r, p.compileOnly);
    // timings with both ends: the first compile and execute, and the earliest start and latest end
    let compile: Timed | undefined, execute: Timed | undefined, first: bigint | null = null, last: bigint | null = null;
    for (const t of p.untimed.has(i) ? [] : r.timing) {
      if (t.start === null || t.end === null) continue;
      if (t.name === 'compile') compile ??= t as Timed;
      else if (t.name === 'execute') execute ??= t as Timed;
      if (first === null || t.start < first) first = t.start;
      if (last === null || t.end > last) last = t.end;
    }
    const evals: PlannedEval[] = [];
    if (first === null || last === null) {
      const took = secondsToNs(r.executionTime);
      let end = p.window && p.window.end < cursor ? p.window.end : cursor;
      let start = end - took;
      if (start < low) {
        start = low;
        end = low + took;
        if (p.window && end > p.window.end) end = p.window.end > start ? p.window.end : start;
      }
      evals.push({ phase, start, end, result });
    } else if (phase !== 'run') {
      // compile-only commands and hooks: one evaluation spanning every timing
      evals.push({ phase, start: first, end: last, result });
    } else if (compile && execute && compile.end > execute.start && execute.end > compile.start) {
      // ranges that overlap timed one piece of work twice (the new engine gives both the same range)
      evals.push({ phase: 'run', start: first, end: last, result });
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
    const n = seen.get(r.uniqueId) ?? 0;
    seen.set(r.uniqueId, n + 1);
    yield { r, key: n === 0 ? r.uniqueId : `${r.uniqueId}#${n}`, start, end, evals };
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
   * The other nodes' records, once they follow the caller's in the output, with their counts for
   * the phase and invocation ends.
   */
  finish(): Promise<PartCounts[]>;
}

/** What the nodes written elsewhere add to the phase and invocation ends. */
export interface PartCounts {
  phases: Record<string, PhaseCounts>;
  tallies: NodeTally[];
}

interface OpenRun {
  p: Plan;
  inv: Invocation;
  ids: RunSpanIds;
  phases: Map<string, Phase>;
}

function summaryOf(run: LegacyRun): MigrateSummary {
  const invocationId = invocationIdOf(run);
  const s = newSummary(traceIdOf(invocationId), invocationId, run.command ?? 'unknown');
  s.file = run.file;
  s.nodes = run.results.length;
  return s;
}

/** Write a planned run's head: process and invocation spans, then each phase's start. */
function openRun(w: TelemetryWriter, run: LegacyRun, p: Plan, summary: MigrateSummary): OpenRun {
  const ids = new RunSpanIds(summary.traceId);
  const inv = w.startInvocation({
    command: run.command, invocationId: summary.invocationId, at: p.start, rawCommand: run.rawCommand, spanIds: ids.head(), processAt: p.start - 1000n,
    evalArgs: { ...evalArgs(run.args), ...(run.dbtVersion ? { legacy_dbt_version: run.dbtVersion } : {}) },
  });
  const phases = new Map<string, Phase>();
  for (const [name, at] of phaseStarts(p.bounds)) phases.set(name, inv.startPhase(name, { nodeCount: p.bounds.get(name)!.count, at, spanId: ids.phase(name) }));
  return { p, inv, ids, phases };
}

/**
 * When each phase opens: before its first node, and after the phases that run before it (a node
 * without timing, placed at the start, must not open RUN before RENDER).
 */
function phaseStarts(bounds: Plan['bounds']): [string, bigint][] {
  const names = [...bounds.keys()].sort((a, b) => rank(a) - rank(b));
  const out: [string, bigint][] = [];
  let next: bigint | null = null;
  for (const name of names.reverse()) {
    let at = bounds.get(name)!.start - 1n;
    if (next !== null && at >= next) at = next - 1n;
    out.unshift([name, at]);
    next = at;
  }
  return out;
}

const rank = (phase: string) => (PHASE_ORDER.includes(phase) ? PHASE_ORDER.indexOf(phase) : PHASE_ORDER.length);

/**
 * Write nodes [from, to) of the run. The plan is walked from the first node even for a later part:
 * a node without timing starts where the nodes before it ended.
 */
async function writeNodes(w: TelemetryWriter, run: LegacyRun, manifest: Manifest | undefined, o: OpenRun, from: number, to: number): Promise<void> {
  // a node's event ids from its key: the same in whichever part of the run it falls
  const eventIds = w.ids instanceof RunIds ? w.ids : undefined;
  let i = 0;
  for (const n of planNodes(run, o.p)) {
    if (i >= to) break;
    if (i++ < from) continue;
    eventIds?.node(`${o.ids.traceId}/${n.key}`);
    const info = n.r.noUniqueId ? { ...nodeInfo(n.r.uniqueId, { name: n.r.noUniqueId }), uniqueId: '' } : nodeInfo(n.r.uniqueId, manifest?.nodes.get(n.r.uniqueId));
    const node = o.inv.startNode(info, { at: n.start, spanId: o.ids.node(n.key) });
    const f = n.r.freshness;
    for (const e of n.evals) {
      const ev = node.evaluate(o.phases.get(e.phase)!, { at: e.start, spanId: o.ids.evaluation(e.phase, n.key) });
      // A stale source says how stale, as the older engine's freshness result line does (its level: warn or error).
      const fo = e.result.freshness?.outcome;
      if (f && (fo === 'warned' || fo === 'failed')) ev.message(freshnessText(n.r.uniqueId, f), { severity: fo === 'failed' ? 'error' : 'warn', at: e.end });
      ev.end(e.result, { at: e.end });
    }
    // What the freshness query measured, beside the engine's age_seconds (sources.json only).
    if (f) node.core.update({ max_loaded_at: f.maxLoadedAt ?? undefined, snapshotted_at: f.snapshottedAt ?? undefined, freshness_criteria: f.criteria ?? undefined });
    // A node's error is found by its unique_id; one without is found by the span it is logged on,
    // so its NodeProcessed span carries it too.
    const anonymousError = n.r.noUniqueId ? n.evals.find((e) => e.result.errorMessage)?.result.errorMessage : undefined;
    if (anonymousError) node.message(anonymousError, { severity: 'error', at: n.end });
    node.end(undefined, { at: n.end });
    if (i % 2000 === 0) await w.drain();
  }
  eventIds?.node(null);
}

/** "source raw.orders: max_loaded_at 2026-01-05T09:00:00+00:00, 90002 s ago (warn after 12 hour, error after 1 day)" */
function freshnessText(uniqueId: string, f: Freshness): string {
  const name = uniqueId.split('.').slice(2).join('.');
  const age = f.ageS === null ? '' : `, ${Math.round(f.ageS)} s ago`;
  return `source ${name}: max_loaded_at ${f.maxLoadedAt ?? 'unknown'}${age}${f.criteria ? ` (${f.criteria})` : ''}`;
}

/**
 * Write one run through the writer (the caller owns and closes the writer). With `split`, helper
 * threads write the later nodes and this thread the first `split.own`.
 */
export async function migrateRun(w: TelemetryWriter, run: LegacyRun, manifest?: Manifest, split?: RunSplit): Promise<MigrateSummary> {
  const summary = summaryOf(run);
  const o = openRun(w, run, plan(run, manifest, summary), summary);
  const n = run.results.length;
  const helped = split !== undefined && split.own < n;
  await timed('migrate: nodes of this thread', () => writeNodes(w, run, manifest, o, 0, helped ? split.own : n));
  if (helped) {
    await w.drain();
    for (const part of await split.finish()) {
      for (const [name, c] of Object.entries(part.phases)) o.phases.get(name)?.addCounted(c);
      for (const t of part.tallies) o.inv.tally(t);
    }
  }
  for (const [name, ph] of o.phases) ph.end({ at: o.p.bounds.get(name)!.end });
  o.inv.end({ at: o.p.end, ...skipsFailed(run, summary) });
  await w.drain();
  return summary;
}

/**
 * dbt-core fails a command with a skipped node (exit code 1; reference legacy.md 1.5-1.6), a skip
 * caused by something run_results.json may not list (a failed on-run-start hook before 1.9): such a
 * run ended in error even when no node did. The new engine's skips do not fail its run.
 */
function skipsFailed(run: LegacyRun, summary: MigrateSummary): { status?: { message: string; code: number } } {
  // (an error or a failed test already ends the run with errors)
  if (run.engine !== 'dbt-core' || summary.outcomes.error || summary.tests.failed) return {};
  const skipped = run.results.filter((r) => r.status.toLowerCase() === 'skipped' && resourceTypeOf(r.uniqueId) !== 'exposure').length;
  if (skipped === 0) return {};
  return { status: { message: `Executed with errors: ${skipped === 1 ? '1 node' : `${skipped} nodes`} skipped, which fails the older engine's run`, code: 2 } };
}

/** A run planned by a helper thread (planning takes a while too). */
export interface PlannedPart {
  run: LegacyRun;
  manifest: Manifest | undefined;
  summary: MigrateSummary;
  plan: Plan;
}

export function planPart(run: LegacyRun, manifest: Manifest | undefined): PlannedPart {
  const summary = summaryOf(run);
  return { run, manifest, summary, plan: plan(run, manifest, summary) };
}

/**
 * A helper thread's part of a run: nodes [from, to) under head spans re-created with the same
 * derived ids. The head's own records are the main thread's to write: the helper's sink drops them
 * (see HEAD_EVENT_KEYS).
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
