/**
 * Hand-made runs whose timing and outcomes are known, written by the project's own TelemetryWriter
 * to JSONL: every time is given in milliseconds from the run's start.
 */
import path from 'node:path';
import { seededIds } from '../../src/produce/ids.js';
import type { NodeResult } from '../../src/produce/node-attrs.js';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';
import { TelemetryWriter, type Evaluation, type Node, type Phase } from '../../src/produce/writer.js';

export interface EvalSpec {
  id: string;
  start: number;
  end: number;
  result?: NodeResult;
}

export interface PhaseSpec {
  phase: string;
  start: number;
  end: number;
  evals: EvalSpec[];
}

export interface RunSpec {
  command?: string;
  rawCommand?: string;
  /** the run's start, ms from 2026-03-02T09:00:00Z */
  at: number;
  phases: PhaseSpec[];
  /** the invocation's end, ms from the run's start (default: the last phase's end + 1) */
  end?: number;
}

const T0 = 1_772_442_000_000_000_000n;
const nsAt = (ms: number) => T0 + BigInt(Math.round(ms * 1e6));

export function typeOf(id: string): string {
  return id.split('.')[0]!;
}

/** Write the runs to one JSONL file; returns its path and each run's trace id, in order. */
export async function writeRuns(dir: string, name: string, runs: RunSpec[], seed = 7): Promise<{ file: string; traces: string[] }> {
  const file = path.join(dir, name);
  const writer = new TelemetryWriter({ sinks: [new JsonlSink({ path: file, append: false, level: 'trace' })], ids: seededIds(seed), version: '2.0.0-test' });
  const traces: string[] = [];
  for (const r of runs) {
    const at = (ms: number) => nsAt(r.at + ms);
    const inv = writer.startInvocation({ command: r.command ?? 'build', rawCommand: r.rawCommand, at: at(0) });
    traces.push(inv.traceId);
    const nodes = new Map<string, { node: Node; last: number }>();
    // Every NodeProcessed opens at the run's start and ends after its node's last evaluation.
    for (const p of r.phases) {
      for (const e of p.evals) {
        const n = nodes.get(e.id);
        if (n) n.last = Math.max(n.last, e.end);
        else nodes.set(e.id, { node: inv.startNode({ uniqueId: e.id, nodeType: typeOf(e.id) }, { at: at(0) }), last: e.end });
      }
    }
    for (const p of r.phases) {
      const phase: Phase = inv.startPhase(p.phase, { nodeCount: p.evals.length, at: at(p.start) });
      // Starts and ends in time order, as an engine writes them.
      const events = p.evals.flatMap((e, i) => [{ t: e.start, i, end: false }, { t: e.end, i, end: true }]);
      events.sort((a, b) => a.t - b.t || Number(a.end) - Number(b.end) || a.i - b.i);
      const open = new Map<number, Evaluation>();
      for (const ev of events) {
        const spec = p.evals[ev.i]!;
        if (!ev.end) open.set(ev.i, nodes.get(spec.id)!.node.evaluate(phase, { at: at(ev.t) }));
        else open.get(ev.i)!.end(spec.result ?? { outcome: 'success' }, { at: at(ev.t) });
      }
      phase.end({ at: at(p.end) });
    }
    for (const { node, last } of nodes.values()) node.end(undefined, { at: at(last + 0.01) });
    const end = r.end ?? Math.max(...r.phases.map((p) => p.end)) + 1;
    inv.end({ at: at(end) });
  }
  await writer.close();
  return { file, traces };
}

/** A test's result in the RUN phase. */
export const testResult = (outcome: 'passed' | 'warned' | 'failed', failingRows = outcome === 'passed' ? 0 : 3): NodeResult => ({
  outcome: 'success',
  test: { outcome, failingRows },
});
