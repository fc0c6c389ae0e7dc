import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  criticalMarks, criticalPathTable, criticalSpans, longestDependencyPath, manifestCriticalPath, phaseLabels, spanCriticalPaths,
} from '../../src/analyze/critical-path.js';
import { findSavedQuery, runSavedQuery } from '../../src/analyze/queries.js';
import { buildReportData } from '../../src/analyze/report/data.js';
import { formatDuration } from '../../src/render/tree-text.js';
import { parseManifest } from '../../src/legacy/manifest.js';
import { generate } from '../../src/produce/generate/index.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { runCli } from '../helpers/cli.js';
import { span, tempDir, writeLines } from '../helpers/fixtures.js';
import { writeRuns, type RunSpec } from './make-runs.js';

/** Hand-made runs whose critical paths are known (times in ms from the run's start). */
const RUNS: RunSpec[] = [
  {
    // two threads: A runs a1 then a2; B runs b1 then b2, which ends last
    at: 0,
    phases: [{
      phase: 'run', start: 0, end: 100, evals: [
        { id: 'model.p.a1', start: 0, end: 30 },
        { id: 'model.p.a2', start: 31, end: 60 },
        { id: 'model.p.b1', start: 0, end: 50 },
        { id: 'model.p.b2', start: 52, end: 95 },
        { id: 'model.p.c', start: 60, end: 70 },
      ],
    }],
  },
  {
    // `down` waited for its slow upstream `up`; the quick nodes beside them end earlier
    at: 3_600_000,
    phases: [
      { phase: 'render', start: 0, end: 12, evals: [{ id: 'model.p.up', start: 1, end: 4 }, { id: 'model.p.down', start: 5, end: 11 }] },
      {
        phase: 'run', start: 20, end: 130, evals: [
          { id: 'model.p.up', start: 20, end: 100 },
          { id: 'model.p.q1', start: 20, end: 30 },
          { id: 'model.p.q2', start: 31, end: 40 },
          { id: 'model.p.down', start: 105, end: 125 },
        ],
      },
    ],
  },
  {
    // ties: t1 and t2 end together (t1 started first); u_a and u_b are identical but for their ids;
    // z0 and z1 take no time at the same instant
    at: 7_200_000,
    phases: [{
      phase: 'run', start: 0, end: 80, evals: [
        { id: 'model.p.x', start: 0, end: 5 },
        { id: 'model.p.t2', start: 20, end: 50 },
        { id: 'model.p.t1', start: 10, end: 50 },
        { id: 'model.p.z1', start: 52, end: 52 },
        { id: 'model.p.z0', start: 52, end: 52 },
        { id: 'model.p.u_b', start: 55, end: 70 },
        { id: 'model.p.u_a', start: 55, end: 70 },
      ],
    }],
  },
];

describe('critical path from the spans (CRISP), on hand-made runs', () => {
  const dir = tempDir('runlens-critical-');
  let db: Db;
  let file: string;
  let traces: string[];
  const chain = async (trace: string, phase = 'run') => {
    const p = (await spanCriticalPaths(db, trace)).find((x) => x.phase === phase)!;
    return p.links.map((l) => [l.unique_id!.replace('model.p.', ''), l.wait_ms, l.duration_ms]);
  };

  beforeAll(async () => {
    ({ file, traces } = await writeRuns(dir, 'runs.jsonl', RUNS));
    db = await openModel();
    await loadPaths(db, [file]);
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows the thread that ended last across parallel threads', async () => {
    expect(await chain(traces[0]!)).toEqual([['b1', 0, 50], ['b2', 2, 43]]);
    const [p] = await spanCriticalPaths(db, traces[0]!);
    expect(p).toMatchObject({ phase: 'run', phase_ms: 100, method: 'spans' });
    expect(p!.links.map((l) => [l.position, l.start_ms])).toEqual([[1, 0], [2, 52]]);
  });

  it('goes through the slow upstream a node waited for, per phase', async () => {
    expect(await chain(traces[1]!)).toEqual([['up', 0, 80], ['down', 5, 20]]);
    expect(await chain(traces[1]!, 'render')).toEqual([['up', 1, 3], ['down', 1, 6]]);
    expect((await spanCriticalPaths(db, traces[1]!)).map((p) => p.phase)).toEqual(['render', 'run']);
  });

  it('breaks ties by the earlier start, then the smaller unique_id, and moves past zero-length evaluations', async () => {
    expect(await chain(traces[2]!)).toEqual([['x', 0, 5], ['t1', 5, 40], ['z1', 2, 0], ['z0', 0, 0], ['u_a', 3, 15]]);
  });

  it('gives every run at once in run order, and the critical span ids of one run', async () => {
    const all = await spanCriticalPaths(db);
    expect(all.map((p) => [traces.indexOf(p.trace_id), p.phase])).toEqual([[0, 'run'], [1, 'render'], [1, 'run'], [2, 'run']]);
    const marks = await criticalSpans(db, traces[1]!);
    expect(marks.size).toBe(4);
    const ids = await db.all<{ span_id: string; unique_id: string; phase: string }>(
      `SELECT span_id, unique_id, phase FROM nodes WHERE kind = 'evaluated' AND trace_id = $t ORDER BY span_id`, { t: traces[1]! },
    );
    const marked = ids.filter((r) => marks.has(r.span_id)).map((r) => `${r.phase} ${r.unique_id}`).sort();
    expect(marked).toEqual(['render model.p.down', 'render model.p.up', 'run model.p.down', 'run model.p.up']);
    const down = ids.find((r) => r.phase === 'run' && r.unique_id === 'model.p.down')!;
    expect(marks.get(down.span_id)).toEqual({ phase: 'run', position: 2, of: 2 });
  });

  describe('the command and the tree', () => {
    const manifest = (nodes: Record<string, string[]>) => {
      const p = path.join(dir, `manifest-${Object.keys(nodes).length}.json`);
      writeFileSync(p, JSON.stringify({ nodes: Object.fromEntries(Object.entries(nodes).map(([id, deps]) => [id, { resource_type: 'model', depends_on: { nodes: deps } }])) }));
      return p;
    };

    it('critical-path prints each phase as table or JSON, and says which method gave it', () => {
      const t = runCli(['critical-path', file, '--trace', traces[1]!]);
      expect(t.code).toBe(0);
      expect(t.stdout).toContain('critical path from the spans');
      expect(t.stdout).toMatch(/phase run: 110ms; 2 nodes on the path: 100ms working, 5\.0ms waiting/);
      const j = runCli(['critical-path', file, '--format', 'json']);
      expect(j.code).toBe(0);
      const runs = JSON.parse(j.stdout) as { trace_id: string; phases: { phase: string; method: string; links: { unique_id: string }[] }[] }[];
      expect(runs.map((r) => r.trace_id)).toEqual(traces);
      expect(runs[1]!.phases.map((p) => [p.phase, p.method, p.links.map((l) => l.unique_id)])).toEqual([
        ['render', 'spans', ['model.p.up', 'model.p.down']],
        ['run', 'spans', ['model.p.up', 'model.p.down']],
      ]);
    });

    it('with --manifest adds the longest dependency path by duration, marked as the manifest method', () => {
      // run 0: a1 -> a2 -> c (30+29+10) against b1 -> b2 (50+43)
      const m = manifest({ 'model.p.a1': [], 'model.p.a2': ['model.p.a1'], 'model.p.c': ['model.p.a2'], 'model.p.b1': [], 'model.p.b2': ['model.p.b1'] });
      const j = runCli(['critical-path', file, '--trace', traces[0]!, '--manifest', m, '--format', 'json']);
      expect(j.code).toBe(0);
      const run = JSON.parse(j.stdout) as { manifest: { method: string; total_ms: number; links: { unique_id: string; cumulative_ms: number }[] } };
      expect(run.manifest.method).toBe('manifest');
      expect(run.manifest.links.map((l) => [l.unique_id, l.cumulative_ms])).toEqual([['model.p.b1', 50], ['model.p.b2', 93]]);
      const t = runCli(['critical-path', file, '--trace', traces[0]!, '--manifest', m]);
      expect(t.stdout).toContain('estimated critical path from the manifest');
      const bad = runCli(['critical-path', file, '--manifest', path.join(dir, 'runs.jsonl')]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('runs.jsonl');
    });

    it('tree marks the critical evaluations with their place on the path', () => {
      const r = runCli(['tree', file, '--trace', traces[0]!]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Node evaluated \(model\.p\.b1\)\s+\[success, -> processed [0-9a-f]{16}, critical path 1\/2\]/);
      expect(r.stdout).toMatch(/Node evaluated \(model\.p\.b2\)\s+\[success, -> processed [0-9a-f]{16}, critical path 2\/2\]/);
      expect(r.stdout.match(/critical path/g)).toHaveLength(2);
      const j = JSON.parse(runCli(['tree', file, '--trace', traces[0]!, '--format', 'json']).stdout);
      const marked: string[] = [];
      const walk = (n: { unique_id: string; critical_path?: { position: number }; children: unknown[] }) => {
        if (n.critical_path) marked.push(`${n.unique_id} ${n.critical_path.position}`);
        n.children.forEach((c) => walk(c as typeof n));
      };
      j.roots.forEach(walk);
      expect(marked.sort()).toEqual(['model.p.b1 1', 'model.p.b2 2']);
    });
  });
});

/** The walk done naively, one link at a time, with the documented tie-breaking. */
function naiveWalk(evs: { span_id: string; unique_id: string; start: bigint; end: bigint }[]): string[] {
  // preferred first: later end, earlier start, smaller unique_id, smaller span id
  const better = (a: (typeof evs)[number], b: (typeof evs)[number]) =>
    a.end !== b.end ? a.end > b.end : a.start !== b.start ? a.start < b.start : a.unique_id !== b.unique_id ? a.unique_id < b.unique_id : a.span_id < b.span_id;
  const ranked = [...evs].sort((a, b) => (better(a, b) ? 1 : better(b, a) ? -1 : 0)); // ascending preference
  const chain: string[] = [];
  let i = ranked.length - 1;
  while (i >= 0) {
    const cur = ranked[i]!;
    chain.unshift(cur.span_id);
    let j = i - 1;
    while (j >= 0 && ranked[j]!.end > cur.start) j--;
    i = j;
  }
  return chain;
}

describe('critical path through an evaluation that ends before it starts', () => {
  it('shows its time as it is, says so, and leaves it out of the working time', async () => {
    const dir = tempDir('runlens-critical-neg-');
    try {
      // back ends 5 ms before it starts (a clock stepped back); sub ends 0.4 µs after it starts
      const ET = (x: string) => `v1.public.events.fusion.${x}`;
      const ev = (id: string, node: string, start: number, end: number) => span({
        id, parent: '00000000000000d2', name: `Node evaluated (model.p.${node})`, eventType: ET('node.NodeEvaluated'), start, end,
        attrs: { unique_id: `model.p.${node}`, phase: 'EXECUTION_PHASE_RUN' }, endAttrs: { node_outcome: 'NODE_OUTCOME_SUCCESS' },
      });
      const file = writeLines(dir, 'neg.jsonl', [
        ...span({ id: '00000000000000d1', name: 'dbt invocation (x)', eventType: ET('invocation.Invocation'), start: 0, end: 101 }),
        ...span({ id: '00000000000000d2', parent: '00000000000000d1', name: 'Phase: RUN', eventType: ET('phase.PhaseExecuted'), start: 0, end: 100, attrs: { phase: 'EXECUTION_PHASE_RUN' } }),
        ...ev('00000000000000e1', 'a', 0, 30),
        ...ev('00000000000000e2', 'back', 40, 35),
        ...ev('00000000000000e3', 'sub', 41, 41.0004),
        ...ev('00000000000000e4', 'b', 42, 90),
      ]);
      const t = runCli(['critical-path', file]);
      expect(t.code, t.stderr).toBe(0);
      const row = (id: string) => t.stdout.split('\n').find((l) => l.includes(`model.p.${id} `))!;
      expect(row('back')).toMatch(/-5\.0ms \(ends before it starts\)$/);
      expect(row('sub')).toMatch(/ <1µs$/);
      // a 30 + sub + b 48 ms: the 5 ms back is not taken from the working time
      expect(t.stdout).toMatch(/4 nodes on the path: 78ms working/);
      const tree = runCli(['tree', file]);
      expect(tree.stdout).toMatch(/Node evaluated \(model\.p\.back\)  \[[^\]]*ends before it starts[^\]]*\]  -5\.0ms\n/);
      const html = path.join(dir, 'report.html');
      const rep = runCli(['report', file, '-o', html]);
      expect(rep.code, rep.stderr).toBe(0);
      expect(readFileSync(html, 'utf8')).toMatch(/4 node\(s\) on the path: 78ms working/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('critical path of generated runs', () => {
  it('matches a naive one-link-at-a-time walk in every phase', async () => {
    const dir = tempDir('runlens-critical-g-');
    const db = await openModel();
    try {
      const out = path.join(dir, 'g.jsonl');
      await generate({ output: out, runs: 2, nodes: 400, seed: 11, threads: 6, failRate: 0.05 });
      await loadPaths(db, [out]);
      const evs = await db.all<{ trace_id: string; phase_span: string; span_id: string; unique_id: string; start_ns: string; end_ns: string }>(
        `SELECT e.trace_id, e.parent_span_id AS phase_span, e.span_id, e.unique_id, e.start_ns::VARCHAR AS start_ns, e.end_ns::VARCHAR AS end_ns
         FROM spans e JOIN spans p ON p.trace_id = e.trace_id AND p.span_id = e.parent_span_id
         WHERE e.kind = 'node_evaluated' AND p.kind = 'phase' AND e.ended`,
      );
      const groups = new Map<string, { span_id: string; unique_id: string; start: bigint; end: bigint }[]>();
      for (const e of evs) {
        const key = `${e.trace_id} ${e.phase_span}`;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key)!.push({ span_id: e.span_id, unique_id: e.unique_id, start: BigInt(e.start_ns), end: BigInt(e.end_ns) });
      }
      const phases = await spanCriticalPaths(db);
      expect(phases.length).toBe(groups.size);
      let longest = 0;
      for (const p of phases) {
        const phaseSpan = evs.find((e) => e.span_id === p.links[0]!.span_id && e.trace_id === p.trace_id)!.phase_span;
        const want = naiveWalk(groups.get(`${p.trace_id} ${phaseSpan}`)!);
        expect(p.links.map((l) => l.span_id)).toEqual(want);
        longest = Math.max(longest, want.length);
      }
      // the serial phases (render, analyze) give chains of every node: the doubling covers long chains
      expect(longest).toBe(400);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('longest dependency path (estimated critical path) through a manifest', () => {
  const graph = (parents: Record<string, string[]>) => parseManifest({ nodes: Object.fromEntries(Object.entries(parents).map(([id, d]) => [id, { depends_on: { nodes: d } }])) });
  const node = (unique_id: string, duration_ms: number) => ({ unique_id, duration_ms, resource_type: 'model', node_outcome: 'success' });

  it('weighs each node by its duration and passes through nodes the run did not execute', () => {
    // a -> b -> d and a -> eph -> c -> d: eph (ephemeral, not in the run) weighs nothing
    const m = graph({ a: [], b: ['a'], eph: ['a'], c: ['eph'], d: ['b', 'c'], e: [] });
    const p = longestDependencyPath(m, 'manifest.json', 't', [node('a', 10), node('b', 20), node('c', 30), node('d', 5), node('e', 40)]);
    expect(p.links.map((l) => [l.unique_id, l.cumulative_ms])).toEqual([['a', 10], ['c', 40], ['d', 45]]);
    expect(p).toMatchObject({ method: 'manifest', total_ms: 45, matched: 5, nodes: 5 });
  });

  it('breaks ties by the smaller unique_id, and rejects cycles and foreign manifests', () => {
    const m = graph({ a: [], b: ['a'], c: ['a'], d: ['c', 'b'] });
    const p = longestDependencyPath(m, 'm.json', 't', [node('a', 1), node('b', 7), node('c', 7), node('d', 1)]);
    expect(p.links.map((l) => l.unique_id)).toEqual(['a', 'b', 'd']);
    expect(() => longestDependencyPath(graph({ a: ['c'], b: ['a'], c: ['b'] }), 'm.json', 't', [node('a', 1)])).toThrow(/m\.json: .*cycle/);
    expect(() => longestDependencyPath(graph({ x: [] }), 'm.json', 't', [node('a', 1)])).toThrow(/none of the run's 1 nodes/);
  });

  it('weighs a node that ends before it starts (a clock stepped back) as nothing, and shows its duration as it is', () => {
    const m = graph({ x: [], y: ['x'], z: [], w: ['y'] });
    const p = longestDependencyPath(m, 'm.json', 't', [node('x', 3), node('y', -100), node('w', 50), node('z', 20)]);
    expect(p.links.map((l) => [l.unique_id, l.duration_ms, l.cumulative_ms])).toEqual([['x', 3, 3], ['y', -100, 3], ['w', 50, 53]]);
    expect(p.total_ms).toBe(53);
  });

  it('reads the run from the model', async () => {
    const dir = tempDir('runlens-critical-m-');
    const { file, traces } = await writeRuns(dir, 'r.jsonl', [RUNS[1]!]);
    const db = await openModel();
    try {
      await loadPaths(db, [file]);
      const m = graph({ 'model.p.up': [], 'model.p.down': ['model.p.up'], 'model.p.q1': [], 'model.p.q2': ['model.p.q1'] });
      const p = await manifestCriticalPath(db, traces[0]!, 'm.json', m);
      // node durations are the sums of their evaluations (render + run), in whole milliseconds
      expect(p.links.map((l) => [l.unique_id, l.duration_ms])).toEqual([['model.p.up', 83], ['model.p.down', 26]]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Two generated runs made into one trace holding two invocations (one invocation id given to two
 * commands, which the model allows): each has its own `run` phase span.
 */
async function twoInvocationTrace(dir: string): Promise<{ file: string; trace: string }> {
  const out = path.join(dir, 'g.jsonl');
  await generate({ output: out, runs: 5, nodes: 30, seed: 7, failRate: 0.2 });
  type Rec = { trace_id: string; record_type: string; event_type: string; attributes: Record<string, unknown>; links?: { trace_id: string }[] };
  const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);
  const traces = [...new Set(recs.map((r) => r.trace_id))];
  const [a, b] = [traces[2]!, traces[3]!];
  const inv = recs.find((r) => r.trace_id === a && r.event_type.endsWith('.Invocation'))!.attributes.invocation_id;
  for (const r of recs) {
    if (r.trace_id === b) {
      r.trace_id = a;
      if (r.event_type.endsWith('.Invocation') && r.record_type !== 'LogRecord') r.attributes.invocation_id = inv;
    }
    for (const l of r.links ?? []) l.trace_id = a;
  }
  const file = path.join(dir, 'two-inv.jsonl');
  writeFileSync(file, recs.map((r) => JSON.stringify(r) + '\n').join(''));
  return { file, trace: a };
}

describe('critical path of a trace holding two invocations', () => {
  const dir = tempDir('runlens-critical-two-');
  let db: Db;
  let file: string;
  let trace: string;
  beforeAll(async () => {
    ({ file, trace } = await twoInvocationTrace(dir));
    db = await openModel();
    await loadPaths(db, [file]);
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one path per phase span in the saved query, the command and the report', async () => {
    const phaseSpans = await db.all<{ span_id: string; phase: string }>(
      `SELECT span_id, phase FROM spans WHERE trace_id = $t AND kind = 'phase' ORDER BY start_ns, span_id`, { t: trace },
    );
    expect(phaseSpans.filter((p) => p.phase === 'run').length).toBe(2);
    const paths = await spanCriticalPaths(db, trace);
    const runs = paths.filter((p) => p.phase === 'run');
    expect(runs.length).toBe(2);
    for (const p of paths) expect(p.links.map((l) => l.position)).toEqual(p.links.map((_, i) => i + 1));

    // the saved query's rows tell the two chains apart by the phase's span id
    const rows = (await runSavedQuery(db, findSavedQuery('critical-path'), { trace })).rows;
    const byPhase = new Map<string, number[]>();
    for (const r of rows) {
      const k = `${r.phase} ${r.phase_span_id}`;
      if (!byPhase.has(k)) byPhase.set(k, []);
      byPhase.get(k)!.push(r.position as number);
    }
    expect([...byPhase.keys()].filter((k) => k.startsWith('run ')).length).toBe(2);
    for (const positions of byPhase.values()) expect(positions).toEqual(positions.map((_, i) => i + 1));

    // the report: one section per path, with the command's figures
    const data = await buildReportData(db, { trace });
    expect(data.critical.map((p) => [p.phase, p.links])).toEqual(paths.map((p) => [p.phase, p.links.length]));
    for (const [i, c] of data.critical.entries()) {
      const ids = new Set(paths[i]!.links.map((l) => l.span_id));
      expect(c.longest.every((l) => ids.has(l.span_id as string))).toBe(true);
      expect(c.longest.map((l) => l.position)).toEqual([...c.longest.map((l) => l.position as number)].sort((x, y) => x - y));
    }

    // the chart: a band per phase span, each marking its own chain
    const g = JSON.parse(data.gantt) as { phases: string[]; p: number[]; k: number[] };
    // a phase name that comes twice is numbered in order, so the two bands read apart (as the command's headings)
    expect(g.phases).toEqual(phaseLabels(paths));
    expect(g.phases.filter((x) => x.startsWith('run'))).toEqual(['run (1)', 'run (2)']);
    for (const [band, p] of paths.entries()) {
      const marked = g.k.filter((k, e) => k > 0 && g.p[e] === band).sort((x, y) => x - y);
      expect(marked).toEqual(p.links.map((l) => l.position));
    }

    // the marks of views: each evaluation's place of its own chain's length
    const marks = await criticalSpans(db, trace);
    for (const p of runs) for (const l of p.links) expect(marks.get(l.span_id)).toEqual({ phase: 'run', position: l.position, of: p.links.length });
    const table = await criticalPathTable(db, trace);
    const facts = await db.all<{ span_id: string; fact: string }>(`SELECT * FROM ${criticalMarks(table)}`);
    for (const p of runs) for (const l of p.links) expect(facts.find((f) => f.span_id === l.span_id)!.fact).toBe(`critical path ${l.position}/${p.links.length}`);
  });

  it('prints each path on its own in the command and the HTML report', () => {
    const t = runCli(['critical-path', file, '--trace', trace]);
    expect(t.code, t.stderr).toBe(0);
    const heads = t.stdout.split('\n').filter((l) => l.startsWith('phase run'));
    expect(heads.map((h) => h.split(':')[0])).toEqual(['phase run (1)', 'phase run (2)']);
    const html = path.join(dir, 'two.html');
    const rep = runCli(['report', file, '--trace', trace, '-o', html]);
    expect(rep.code, rep.stderr).toBe(0);
    const page = readFileSync(html, 'utf8');
    const sections = [...page.matchAll(/<h3>phase (run \(\d\)): ([^<]*)<\/h3>\n<p>(\d+) node\(s\) on the path: ([^<(]*)/g)].map((m) => `phase ${m[1]}: ${m[2]}; ${m[3]} nodes on the path: ${m[4]!.trim()}`);
    expect(sections).toEqual(heads);
  });
});

describe('critical path totals', () => {
  it('are the exact sums of the links, printed alike by the command and the report', async () => {
    const dir = tempDir('runlens-critical-sum-');
    const db = await openModel();
    try {
      const out = path.join(dir, 'g.jsonl');
      await generate({ output: out, runs: 12, nodes: 40, seed: 3, failRate: 0.15 });
      await loadPaths(db, [out]);
      const paths = await spanCriticalPaths(db);
      // waits are given to the µs and durations to the ns: summed as whole numbers of those
      const exact = (xs: number[], unit: number) => xs.reduce((s, x) => s + Math.round(x * unit), 0) / unit;
      let drifted = 0;
      for (const p of paths) {
        const waits = p.links.map((l) => l.wait_ms);
        expect(p.wait_ms).toBe(exact(waits, 1e3));
        expect(p.work_ms).toBe(exact(p.links.map((l) => Math.max(0, l.duration_ms)), 1e6));
        if (formatDuration(waits.reduce((s, x) => s + x, 0)) !== formatDuration(p.wait_ms)) drifted++;
      }
      // the data holds a phase whose float sum prints another figure than the exact one
      expect(drifted).toBeGreaterThan(0);

      const trace = paths.find((p) => formatDuration(p.links.reduce((s, l) => s + l.wait_ms, 0)) !== formatDuration(p.wait_ms))!;
      const t = runCli(['critical-path', out, '--trace', trace.trace_id]);
      expect(t.code, t.stderr).toBe(0);
      const line = t.stdout.split('\n').find((l) => l.startsWith(`phase ${trace.phase}:`))!;
      expect(line).toContain(`${formatDuration(trace.wait_ms)} waiting`);
      const html = path.join(dir, 'r.html');
      const rep = runCli(['report', out, '--trace', trace.trace_id, '-o', html]);
      expect(rep.code, rep.stderr).toBe(0);
      const m = new RegExp(`<h3>phase ${trace.phase}: [^<]*</h3>\\n<p>\\d+ node\\(s\\) on the path: ([^<(]*)`).exec(readFileSync(html, 'utf8'))!;
      expect(line.endsWith(m[1]!.trim())).toBe(true);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('critical path of a phase that never ended', () => {
  it('says the phase did not end where its duration would be, in the command and the report', async () => {
    const dir = tempDir('runlens-critical-unended-');
    try {
      // a generated run cut at its midpoint: every record that ends (or is logged) after it dropped
      const out = path.join(dir, 'g.jsonl');
      await generate({ output: out, runs: 2, nodes: 30, seed: 7, failRate: 0.2 });
      type Rec = { trace_id: string; start_time_unix_nano?: string; end_time_unix_nano?: string; time_unix_nano?: string };
      const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Rec);
      const trace = recs[0]!.trace_id;
      const at = (r: Rec) => BigInt(r.end_time_unix_nano ?? r.start_time_unix_nano ?? r.time_unix_nano ?? '0');
      const times = recs.filter((r) => r.trace_id === trace).map(at);
      const mid = (times.reduce((a, b) => (b < a ? b : a)) + times.reduce((a, b) => (b > a ? b : a))) / 2n;
      const file = path.join(dir, 'half.jsonl');
      writeFileSync(file, recs.filter((r) => r.trace_id !== trace || at(r) <= mid).map((r) => JSON.stringify(r) + '\n').join(''));

      const t = runCli(['critical-path', file, '--trace', trace]);
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).toMatch(/\nphase run: not ended; \d+ nodes? on the path: /);
      const html = path.join(dir, 'half.html');
      const rep = runCli(['report', file, '--trace', trace, '-o', html]);
      expect(rep.code, rep.stderr).toBe(0);
      expect(readFileSync(html, 'utf8')).toContain('<h3>phase run: not ended</h3>');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
