/**
 * Critical path of a run, two ways:
 * - from the spans (`spans`): per phase, the CRISP walk of the saved query `critical-path` (the
 *   evaluation that ended last, then the one that ended last before it started, and so on);
 * - with a manifest (`manifest`): the longest path through the dependency graph, each node weighted
 *   by its duration in the run (what the hosted platform calls the estimated critical path).
 */
import { InputError } from '../errors.js';
import { readManifest, type Manifest } from '../legacy/manifest.js';
import type { Db } from '../store/db.js';
import { findSavedQuery, runSavedQuery } from './queries.js';
import type { TraceTree, TreeNode } from './tree.js';
import { formatDuration } from '../render/tree-text.js';
import { unended } from '../ui/format.js';

/** One node evaluation on a phase's critical path (a row of the saved query). */
export interface CriticalLink {
  trace_id: string;
  phase: string | null;
  /** the phase's span: a trace holding several invocations has a phase of one name per invocation */
  phase_span_id: string;
  /** 1 = the first link of the phase's chain */
  position: number;
  unique_id: string | null;
  resource_type: string | null;
  node_outcome: string | null;
  skip_reason: string | null;
  test_outcome: string | null;
  /** from the phase's start */
  start_ms: number;
  /** since the previous link ended (the phase's start for the first) */
  wait_ms: number;
  duration_ms: number;
  phase_ms: number | null;
  method: 'spans';
  span_id: string;
}

export interface PhaseCriticalPath {
  trace_id: string;
  phase: string | null;
  phase_span_id: string;
  phase_ms: number | null;
  method: 'spans';
  /** the links' durations, those that end before they start (a clock stepped back) left out */
  work_ms: number;
  /** the links' waits */
  wait_ms: number;
  links: CriticalLink[];
}

/**
 * The views' names of a run's phases, in order: a name that comes twice (a trace holding two
 * invocations) is numbered, `run (1)`, `run (2)`, as the report's chart numbers its bands.
 */
export function phaseLabels(phases: readonly { phase: string | null }[]): string[] {
  const seen = new Map<string, number>();
  return phases.map(({ phase }) => {
    const name = phase ?? '?';
    const k = (seen.get(name) ?? 0) + 1;
    seen.set(name, k);
    return phases.filter((q) => (q.phase ?? '?') === name).length > 1 ? `${name} (${k})` : name;
  });
}

/** A phase's time as the views print it: its duration, or `not ended` for a phase that never ended (it has none). */
export const phaseTimeText = (phaseMs: number | null): string => (phaseMs === null ? unended(false) : formatDuration(phaseMs));

/** The spans' critical path of every phase of one run (or of every run), in run and phase order. */
export async function spanCriticalPaths(db: Db, traceId = ''): Promise<PhaseCriticalPath[]> {
  return phasePaths((await runSavedQuery(db, findSavedQuery('critical-path'), { trace: traceId })).rows as unknown as CriticalLink[]);
}

/** The paths kept in a critical path table (criticalPathTable), in the query's order. */
export async function criticalPathsOf(db: Db, table: string): Promise<PhaseCriticalPath[]> {
  // the table was written in the query's order
  return phasePaths(await db.all<CriticalLink>(`SELECT * FROM ${table} ORDER BY rowid`));
}

/** The query's rows, in its order, as one path per phase span with its totals. */
function phasePaths(rows: CriticalLink[]): PhaseCriticalPath[] {
  const out: PhaseCriticalPath[] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last.trace_id === r.trace_id && last.phase_span_id === r.phase_span_id) last.links.push(r);
    else out.push({ trace_id: r.trace_id, phase: r.phase, phase_span_id: r.phase_span_id, phase_ms: r.phase_ms, method: 'spans', work_ms: 0, wait_ms: 0, links: [r] });
  }
  for (const p of out) {
    // summed exactly, in the query's units (durations to the ns, waits to the µs): a float sum can
    // drift across a rounding boundary, and every view prints these figures
    p.work_ms = p.links.reduce((s, l) => s + Math.max(0, Math.round(l.duration_ms * 1e6)), 0) / 1e6;
    p.wait_ms = p.links.reduce((s, l) => s + Math.round(l.wait_ms * 1e3), 0) / 1e3;
  }
  return out;
}

/** A span's place on its phase's critical path: link `position` of `of`. */
export interface CriticalMark {
  phase: string | null;
  position: number;
  of: number;
}

/**
 * The span ids of a run's critical evaluations (every phase), each with its phase and place in the
 * chain: what a view marks (the text tree, the explorer's tree and waterfall).
 */
export async function criticalSpans(db: Db, traceId: string): Promise<Map<string, CriticalMark>> {
  const marks = new Map<string, CriticalMark>();
  for (const p of await spanCriticalPaths(db, traceId)) {
    for (const l of p.links) marks.set(l.span_id, { phase: p.phase, position: l.position, of: p.links.length });
  }
  return marks;
}

/**
 * The saved query's rows for one run, kept in a temporary table (the columns of CriticalLink) for
 * views that join them (the text tree, the report's chart). Returns the table's name.
 */
export async function criticalPathTable(db: Db, traceId: string): Promise<string> {
  const q = findSavedQuery('critical-path');
  await db.run(`CREATE OR REPLACE TEMP TABLE _critical_path AS ${q.sql.trim().replace(/;\s*$/, '')}`, { trace: traceId });
  return '_critical_path';
}

/** The text tree's marks (span_id, fact) from a critical path table: `critical path 3/9`. */
export function criticalMarks(table: string): string {
  return `(SELECT span_id, 'critical path ' || position || '/' || count(*) OVER (PARTITION BY trace_id, phase_span_id) AS fact FROM ${table})`;
}

/** Set critical_path on the tree's marked spans. */
export function markCritical(tree: TraceTree, marks: ReadonlyMap<string, CriticalMark>): TraceTree {
  if (marks.size === 0) return tree;
  const stack: TreeNode[] = [...tree.roots];
  for (let n = stack.pop(); n; n = stack.pop()) {
    const m = marks.get(n.span_id);
    if (m) n.critical_path = m;
    for (const c of n.children) stack.push(c);
  }
  return tree;
}

export interface ManifestLink {
  position: number;
  unique_id: string;
  resource_type: string | null;
  node_outcome: string | null;
  duration_ms: number;
  /** the path's duration up to and including this node */
  cumulative_ms: number;
}

export interface ManifestCriticalPath {
  trace_id: string;
  method: 'manifest';
  manifest: string;
  /** the sum of the path's durations */
  total_ms: number;
  /** the run's nodes that the manifest knows, of all its nodes */
  matched: number;
  nodes: number;
  links: ManifestLink[];
}

interface RunNode {
  unique_id: string;
  resource_type: string | null;
  node_outcome: string | null;
  duration_ms: number | null;
}

/**
 * The longest path by duration through the manifest's dependency graph (depends_on, or parent_map),
 * each node weighted by its result's duration in the run (node_results: the node's own work, waits
 * excluded; one that ends before it starts, a clock stepped back, weighs nothing). Nodes the run did
 * not execute weigh nothing and are not listed. Ties go to the smaller unique_id.
 */
export function longestDependencyPath(manifest: Manifest, file: string, traceId: string, runNodes: RunNode[]): ManifestCriticalPath {
  const inRun = new Map(runNodes.map((n) => [n.unique_id, n]));
  const weight = (id: string) => Math.max(0, inRun.get(id)?.duration_ms ?? 0);
  const best = new Map<string, { total: number; via: string | null }>();
  const visiting = new Set<string>();
  // Iterative depth-first search (long dependency chains must not overflow the JS stack).
  const solve = (root: string) => {
    const stack: string[] = [root];
    while (stack.length) {
      const id = stack[stack.length - 1]!;
      if (best.has(id)) {
        stack.pop();
        continue;
      }
      const parents = manifest.parents.get(id) ?? [];
      const todo = parents.filter((p) => !best.has(p));
      if (todo.length && !visiting.has(id)) {
        visiting.add(id);
        for (const p of todo) {
          if (visiting.has(p)) throw new InputError(`the dependency graph has a cycle through ${p}`, file, undefined, 'depends_on');
          stack.push(p);
        }
        continue;
      }
      if (todo.length) throw new InputError(`the dependency graph has a cycle through ${todo[0]}`, file, undefined, 'depends_on');
      visiting.delete(id);
      let via: string | null = null;
      let up = 0;
      for (const p of [...parents].sort()) {
        const t = best.get(p)!.total;
        if (t > up) [up, via] = [t, p];
      }
      best.set(id, { total: up + weight(id), via });
      stack.pop();
    }
  };
  let end: string | null = null;
  let matched = 0;
  for (const id of [...inRun.keys()].sort()) {
    if (manifest.parents.has(id) || manifest.nodes.has(id)) matched++;
    solve(id);
    if (end === null || best.get(id)!.total > best.get(end)!.total) end = id;
  }
  if (runNodes.length > 0 && matched === 0) {
    throw new InputError(`none of the run's ${runNodes.length} nodes is in this manifest (a manifest of another project?)`, file);
  }
  const chain: string[] = [];
  for (let id = end; id !== null; id = best.get(id)!.via) if (inRun.has(id)) chain.unshift(id);
  let cumulative = 0;
  const links = chain.map((id, i): ManifestLink => {
    const n = inRun.get(id)!;
    cumulative += weight(id);
    return {
      position: i + 1, unique_id: id, resource_type: n.resource_type, node_outcome: n.node_outcome,
      duration_ms: round3(n.duration_ms ?? 0), cumulative_ms: round3(cumulative),
    };
  });
  return { trace_id: traceId, method: 'manifest', manifest: file, total_ms: round3(cumulative), matched, nodes: runNodes.length, links };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The manifest's critical path of one run: its node results against the dependency graph. */
export async function manifestCriticalPath(db: Db, traceId: string, manifestFile: string, manifest = readManifest(manifestFile)): Promise<ManifestCriticalPath> {
  const nodes = await db.all<RunNode>(
    `SELECT unique_id, resource_type, node_outcome, duration_ms FROM node_results WHERE trace_id = $t AND unique_id IS NOT NULL ORDER BY unique_id`,
    { t: traceId },
  );
  return longestDependencyPath(manifest, manifestFile, traceId, nodes);
}
