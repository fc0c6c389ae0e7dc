import type { CommandBody } from './command.js';
import {
  manifestCriticalPath, phaseLabels, phaseTimeText, spanCriticalPaths, type ManifestCriticalPath, type PhaseCriticalPath,
} from '../analyze/critical-path.js';
import { spanTraces } from '../analyze/tree.js';
import { readManifest } from '../legacy/manifest.js';
import { manifestBeside } from '../legacy/manifest-finder.js';
import { writeJsonItems } from '../render/json-stream.js';
import { noteLeftOut, outputWidth, renderTable, type TableLayout } from '../render/table.js';
import { formatDuration } from '../render/tree-text.js';
import type { Db } from '../store/db.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { valueOption } from './options.js';
import { plural } from '../render/plural.js';
import { printable } from '../render/printable.js';

interface Args extends ModelArgs {
  trace?: string;
  manifest?: string;
  format: 'table' | 'json';
}

interface RunCriticalPath {
  trace_id: string;
  command: string | null;
  phases: PhaseCriticalPath[];
  manifest?: ManifestCriticalPath;
}

export const criticalPathCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('trace', valueOption('one run: trace id, invocation id, or a unique prefix (default: every run)'))
      .option('format', { choices: ['table', 'json'] as const, default: 'table' as const, describe: 'table for people, json for programs' })
      .example('$0 critical-path samples/failed-build.jsonl', 'per phase: the nodes that decided its wall time')
      .example('$0 critical-path run.jsonl --manifest target/manifest.json', 'also the longest path through the dependency graph'),
  handler: async (a) => {
    // --manifest, else the project's manifest beside the inputs; read first: a bad one fails before any telemetry is loaded
    const manifestFile = a.manifest ?? manifestBeside(a.paths ?? []);
    if (manifestFile && !a.manifest) process.stderr.write(`runlens: using the manifest beside the input, ${manifestFile} (--manifest FILE picks another)\n`);
    const manifest = manifestFile ? readManifest(manifestFile) : undefined;
    await withModel(a, async (db) => {
      const ids = await spanTraces(db, a.trace, (m) => process.stderr.write(`runlens: ${m}\n`));
      async function* runs(): AsyncGenerator<RunCriticalPath> {
        for (const id of ids) {
          yield {
            trace_id: id,
            command: await commandOf(db, id),
            phases: await spanCriticalPaths(db, id),
            ...(manifest ? { manifest: await manifestCriticalPath(db, id, manifestFile!, manifest) } : {}),
          };
        }
      }
      // one run at a time: the document of many large runs is past the longest string
      if (a.format === 'json') return writeJsonItems(process.stdout, runs(), a.trace !== undefined);
      // one note for every table: the phases' tables leave out the same columns
      const layout: TableLayout = { leftOut: new Set() };
      const text: string[] = [];
      for await (const r of runs()) text.push(renderRun(r, layout));
      // (its --format has no csv)
      if (layout.leftOut!.size) noteLeftOut(layout.leftOut!, outputWidth()!, 'json');
      process.stdout.write(printable(text.join('\n')));
    });
  },
};

async function commandOf(db: Db, traceId: string): Promise<string | null> {
  return db.scalar<string | null>('SELECT command FROM runs WHERE trace_id = $t', { t: traceId });
}

const ms = (x: number | null) => formatDuration(x ?? null);
/** What follows a negative duration: the times say the span ended before it started. */
const backwards = (x: number | null) => (x !== null && x < 0 ? ' (ends before it starts)' : '');

function outcome(l: { node_outcome: string | null; skip_reason?: string | null; test_outcome?: string | null }): string {
  const extra = [l.skip_reason, l.test_outcome && l.test_outcome !== 'passed' ? `test ${l.test_outcome}` : null].filter(Boolean);
  return `${l.node_outcome ?? '?'}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}

function renderRun(r: RunCriticalPath, layout: TableLayout): string {
  let out = `trace ${r.trace_id}${r.command ? ` (${r.command})` : ''}\n`;
  out += 'critical path from the spans: per phase, walked back from its end through the evaluation that ended last\n';
  if (r.phases.length === 0) out += '  (no node evaluations under a phase)\n';
  const labels = phaseLabels(r.phases);
  for (const [i, p] of r.phases.entries()) {
    out += `\nphase ${labels[i]}: ${phaseTimeText(p.phase_ms)}; ${plural(p.links.length, 'node')} on the path: ${ms(p.work_ms)} working, ${ms(p.wait_ms)} waiting\n`;
    out += renderTable({
      columns: ['#', 'unique_id', 'outcome', 'start', 'wait', 'duration'],
      rows: p.links.map((l) => ({ '#': l.position, unique_id: l.unique_id, outcome: outcome(l), start: ms(l.start_ms), wait: ms(l.wait_ms), duration: ms(l.duration_ms) + backwards(l.duration_ms) })),
    }, 'table', layout);
  }
  const m = r.manifest;
  if (m) {
    out += `\nestimated critical path from the manifest (${m.manifest}): the longest dependency path by duration, ${plural(m.links.length, 'node')}, ${ms(m.total_ms)}\n`;
    if (m.matched < m.nodes) out += `note: ${m.nodes - m.matched} of the run's ${m.nodes} nodes are not in the manifest\n`;
    out += renderTable({
      columns: ['#', 'unique_id', 'outcome', 'duration', 'cumulative'],
      rows: m.links.map((l) => ({ '#': l.position, unique_id: l.unique_id, outcome: outcome(l), duration: ms(l.duration_ms) + backwards(l.duration_ms), cumulative: ms(l.cumulative_ms) })),
    }, 'table', layout);
  }
  return out;
}
