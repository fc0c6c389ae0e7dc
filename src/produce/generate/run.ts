/**
 * One simulated `build` of a generated project, driven through TelemetryWriter: setup phases,
 * RENDER and ANALYZE for every node, then RUN scheduled on a thread pool in dependency order with
 * plausible durations. Failures (errors, failed tests) skip every descendant with the root failure
 * as upstream; render errors skip the node's later phases; ephemeral models are no-ops; some models
 * are cached.
 */
import { seededRandom } from '../ids.js';
import type { NodeResult } from '../node-attrs.js';
import type { Evaluation, Node, TelemetryWriter } from '../writer.js';
import type { GenNode, GenProject } from './project.js';

export interface RunOptions {
  seed: number;
  runIndex: number;
  /** probability that a node errors / a test fails */
  failRate: number;
  /** probability that a model is reused from cache (not in the first run) */
  cacheRate: number;
  threads: number;
  /** run start, ns since the epoch */
  start: bigint;
  adapterType: string;
  version: string;
  /** write CompiledCode logs and user log lines (DEBUG detail) */
  detail: boolean;
  onNode?: () => void;
}

export interface RunSummary {
  traceId: string;
  invocationId: string;
  errors: number;
  failedTests: number;
  /** nodes skipped, whatever the reason (as `runs` counts them) */
  skipped: number;
}

type Plan =
  | { kind: 'ok' }
  | { kind: 'render_error' }
  | { kind: 'run_error' }
  | { kind: 'test_fail'; rows: number }
  | { kind: 'test_warn'; rows: number }
  | { kind: 'cached' }
  | { kind: 'noop' };

const ms = (x: number): bigint => BigInt(Math.max(1, Math.round(x * 1e6)));

export async function simulateRun(w: TelemetryWriter, p: GenProject, o: RunOptions): Promise<RunSummary> {
  const rnd = seededRandom((o.seed * 7919 + o.runIndex * 104729 + 1) >>> 0);
  const between = (a: number, b: number) => a + rnd() * (b - a);
  // log-normal-ish durations in ms
  const dur = (weight: number) => weight * 120 * Math.exp(rnd() * 2.2 - 0.4);
  let t = o.start;
  const adv = (msDelta: number) => (t += ms(msDelta));
  let pending = 0;
  const tick = async () => {
    if (++pending >= 2000) {
      pending = 0;
      await w.drain();
    }
  };

  const plan: Plan[] = p.nodes.map((n) => planFor(n, o, rnd));
  const inv = w.startInvocation({
    command: 'build',
    at: t,
    evalArgs: {
      debug: false, log_format: 'default', log_path: 'logs', num_threads: String(o.threads), quiet: false,
      resource_types: ['model', 'seed', 'snapshot', 'test', 'unit_test'], vars: '{}', write_catalog: false, write_json: true,
    },
  });
  inv.progress('dbt-fusion', o.version, { at: adv(2) });
  for (const ph of ['load_project', 'parse', 'schedule', 'task_graph_build']) {
    const phase = inv.startPhase(ph, { at: adv(between(1, 5)) });
    if (ph === 'parse') {
      adv(between(50, 400));
      phase.end({ at: t });
      inv.artifact('target/manifest.json', 'manifest', { at: adv(1), end: adv(between(2, 20)) });
      continue;
    }
    phase.end({ at: adv(between(5, 300)) });
  }

  const n = p.nodes.length;
  const summary: RunSummary = { traceId: inv.traceId, invocationId: inv.invocationId, errors: 0, failedTests: 0, skipped: 0 };
  const handles: Node[] = new Array(n);
  const renderEnd: bigint[] = new Array(n);

  // RENDER: every node, in build order; NodeProcessed opens here.
  const render = inv.startPhase('render', { nodeCount: n, at: adv(1) });
  for (const i of p.order) {
    const g = p.nodes[i]!;
    const node = inv.startNode(g.info, { at: adv(0.05) });
    handles[i] = node;
    const ev = node.evaluate(render, { at: adv(0.02) });
    adv(between(0.5, 12));
    if (o.detail && (g.kind === 'model' || g.kind === 'test')) ev.compiledCode(g.sql, `target/compiled/${g.info.relativePath}`, { at: t });
    if (plan[i]!.kind === 'render_error') {
      ev.end({ outcome: 'error', errorType: 'user', errorMessage: `Compilation Error in ${g.kind} ${g.info.name} (${g.info.relativePath})\n  'ref' target '${g.info.name}_src' was not found` }, { at: adv(0.1) });
      node.end(undefined, { at: adv(0.05) });
      summary.errors++;
    } else ev.end({ outcome: 'success' }, { at: adv(0.1) });
    renderEnd[i] = t;
    await tick();
  }
  render.end({ at: adv(0.5) });

  const analyze = inv.startPhase('analyze', { nodeCount: n, at: adv(0.5) });
  for (const i of p.order) {
    const ev = handles[i]!.evaluate(analyze, { at: adv(0.02) });
    if (plan[i]!.kind === 'render_error') ev.end({ outcome: 'skipped', skipReason: 'phase_skipped' }, { at: adv(0.02) });
    else ev.end({ outcome: 'success' }, { at: adv(between(0.2, 6)) });
    await tick();
  }
  analyze.end({ at: adv(0.5) });

  // RUN: schedule on a thread pool, then replay start/end events in time order.
  const run = inv.startPhase('run', { nodeCount: n, at: adv(1) });
  const runStart = t;
  const start: bigint[] = new Array(n);
  const end: bigint[] = new Array(n);
  const rootFailure: (string | null)[] = new Array(n).fill(null);
  const threads: bigint[] = new Array(Math.max(1, o.threads)).fill(runStart);
  for (const i of p.order) {
    const g = p.nodes[i]!;
    let ready = runStart;
    let upstream: string | null = null;
    for (const d of g.deps) {
      if (end[d]! > ready) ready = end[d]!;
      if (!upstream && rootFailure[d]) upstream = rootFailure[d]!;
    }
    const pl = plan[i]!;
    if (pl.kind === 'render_error') {
      // Already failed while rendering: skipped in this phase, and its descendants skip upstream.
      rootFailure[i] = g.info.uniqueId;
      start[i] = ready;
      end[i] = ready + ms(0.05);
      continue;
    }
    if (upstream) {
      rootFailure[i] = upstream;
      plan[i] = { kind: 'ok' };
      start[i] = ready;
      end[i] = ready + ms(between(0.02, 0.2));
      continue;
    }
    let th = 0;
    for (let k = 1; k < threads.length; k++) if (threads[k]! < threads[th]!) th = k;
    const s = threads[th]! > ready ? threads[th]! : ready;
    const d = pl.kind === 'cached' || pl.kind === 'noop' ? between(0.1, 2) : dur(g.weight);
    start[i] = s + ms(between(0.05, 2));
    end[i] = start[i]! + ms(d);
    threads[th] = end[i]!;
    if (pl.kind === 'run_error' || pl.kind === 'test_fail') rootFailure[i] = g.info.uniqueId;
  }

  const events: { t: bigint; i: number; isEnd: boolean }[] = [];
  for (let i = 0; i < n; i++) events.push({ t: start[i]!, i, isEnd: false }, { t: end[i]!, i, isEnd: true });
  events.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.isEnd === b.isEnd ? a.i - b.i : a.isEnd ? -1 : 1));
  const evs: Evaluation[] = new Array(n);
  for (const e of events) {
    const g = p.nodes[e.i]!;
    if (!e.isEnd) {
      evs[e.i] = handles[e.i]!.evaluate(run, { at: e.t });
      continue;
    }
    const ev = evs[e.i]!;
    const result = runResult(g, plan[e.i]!, rootFailure[e.i] !== g.info.uniqueId ? rootFailure[e.i] : null, rnd);
    if (result.outcome === 'success' && plan[e.i]!.kind !== 'cached' && plan[e.i]!.kind !== 'noop') {
      runQueries(ev, g, o, start[e.i]!, e.t, rnd, null);
      if (o.detail && rnd() < 0.3) ev.userLog(`Writing runtime sql for node "${g.info.uniqueId}"`, { relativePath: 'dbt_internal_packages/dbt-adapters/macros/etc/statement.sql', line: 10, column: 7, packageName: p.name, at: e.t - ms(0.01) });
    } else if (result.outcome === 'error' && plan[e.i]!.kind === 'run_error') {
      runQueries(ev, g, o, start[e.i]!, e.t, rnd, result.errorMessage!);
    }
    if (result.outcome === 'error') summary.errors++;
    if (result.test?.outcome === 'failed') summary.failedTests++;
    // a node that failed to render is skipped in this phase, but its result is that error
    if (result.outcome === 'skipped' && plan[e.i]!.kind !== 'render_error') summary.skipped++;
    ev.end(result, { at: e.t });
    if (!handles[e.i]!.ended) handles[e.i]!.end(undefined, { at: e.t + ms(0.03) });
    // done with this node: let big runs keep only what is still open
    handles[e.i] = undefined as never;
    evs[e.i] = undefined as never;
    o.onNode?.();
    await tick();
  }
  let last = runStart;
  for (const x of end) if (x > last) last = x;
  t = last;
  run.end({ at: adv(1) });
  inv.artifact('target/semantic_manifest.json', 'semantic_manifest', { at: adv(1), end: adv(between(2, 10)) });
  inv.end({ at: adv(between(5, 50)), evalArgs: { target: 'dev' } });
  await w.drain();
  return summary;
}

function planFor(g: GenNode, o: RunOptions, rnd: () => number): Plan {
  const r = rnd();
  const f = o.failRate;
  switch (g.kind) {
    case 'test':
      if (r < f) return { kind: 'test_fail', rows: 1 + Math.floor(rnd() * 40) };
      if (r < f * 1.5) return { kind: 'test_warn', rows: 1 + Math.floor(rnd() * 10) };
      return { kind: 'ok' };
    case 'unit_test':
      return r < f ? { kind: 'run_error' } : { kind: 'ok' };
    case 'model':
      if (g.info.materialization === 'ephemeral') return { kind: 'noop' };
      if (r < f * 0.1) return { kind: 'render_error' };
      if (r < f) return { kind: 'run_error' };
      if (o.runIndex > 0 && rnd() < o.cacheRate) return { kind: 'cached' };
      return { kind: 'ok' };
    default:
      return r < f ? { kind: 'run_error' } : { kind: 'ok' };
  }
}

function runResult(g: GenNode, pl: Plan, upstream: string | null, rnd: () => number): NodeResult {
  if (upstream) return { outcome: 'skipped', skipReason: 'upstream', upstreamUniqueId: upstream };
  switch (pl.kind) {
    case 'render_error':
      return { outcome: 'skipped', skipReason: 'phase_skipped' };
    case 'run_error':
      return {
        outcome: 'error',
        errorType: g.kind === 'unit_test' ? 'user' : 'external',
        errorMessage: g.kind === 'unit_test'
          ? `Unit test ${g.info.name} failed: actual rows differ from expected (${1 + Math.floor(rnd() * 5)} rows)`
          : `Database Error in ${g.kind} ${g.info.name} (${g.info.relativePath})\n  Binder Error: Referenced column "${g.info.name}_id" not found in FROM clause!`,
      };
    case 'test_fail':
      return { outcome: 'success', test: { outcome: 'failed', failingRows: pl.rows }, rowsAffected: 1 };
    case 'test_warn':
      return { outcome: 'success', test: { outcome: 'warned', failingRows: pl.rows }, rowsAffected: 1 };
    case 'cached':
      return { outcome: 'skipped', skipReason: 'cached', cache: { reason: 'still_fresh', buildAfterSeconds: 3600, lastUpdatedSeconds: 60 + Math.floor(rnd() * 3000) } };
    case 'noop':
      return { outcome: 'skipped', skipReason: 'noop' };
    case 'ok':
      if (g.kind === 'test' || g.kind === 'unit_test') return { outcome: 'success', rowsAffected: 1 };
      return { outcome: 'success', rowsAffected: g.kind === 'seed' ? 10 + Math.floor(rnd() * 5000) : Math.floor(rnd() * 100000) };
  }
}

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function runQueries(ev: Evaluation, g: GenNode, o: RunOptions, s: bigint, e: bigint, rnd: () => number, error: string | null): void {
  const rel = `"analytics"."${g.info.schema}"."${g.info.identifier}"`;
  const sql =
    g.kind === 'test'
      ? `select\n      count(*) as failures,\n      count(*) != 0 as should_warn,\n      count(*) != 0 as should_error\n    from (\n${g.sql}\n    ) dbt_internal_test`
      : g.kind === 'seed'
        ? `insert into ${rel} values (?, ?, ?)`
        : g.kind === 'unit_test'
          ? `select * from (${g.sql}) as dbt_internal_unit_test`
          : `create or replace ${g.info.materialization === 'view' ? 'view' : 'table'} ${rel} as (\n${g.sql}\n)`;
  const span = e - s;
  const qs = s + span / 20n;
  const qe = e - span / 20n > qs ? e - span / 20n : qs;
  const q = ev.startQuery({ sql: `/* {"app": "dbt", "node_id": "${g.info.uniqueId}"} */\n${sql}`, adapterType: o.adapterType }, { at: qs });
  let id = '';
  for (let k = 0; k < 27; k++) id += B62[Math.floor(rnd() * 62)];
  if (error) q.end({ outcome: 'error', queryId: id, errorMessage: error.split('\n').slice(-1)[0]!.trim(), at: qe });
  else q.end({ queryId: id, at: qe });
}
