import type { CommandBody } from './command.js';
import { migrateFiles, type FileSummary, type MigrateReport } from '../legacy/migrate.js';
import { describeManifestUse } from '../legacy/manifest-finder.js';
import { outsideRunNote } from '../legacy/from-run-results.js';
import { UsageError } from '../errors.js';
import { outFormat } from '../legacy/sinks.js';
import { outputLabel, outputPath, STDOUT } from '../produce/output-path.js';
import { withOutputOptions, type OutputArgs } from './output.js';
import { plural } from '../render/plural.js';
import { listPositional, wholeNumber } from './options.js';
import { exitCodeFor } from '../exit-codes.js';
import { JOBS_LIMIT } from '../legacy/parallel-run.js';

interface Args extends OutputArgs {
  files?: string[];
  manifest?: string;
  'export-to-otlp': boolean;
  format: 'text' | 'json';
  jobs?: number;
}

/** Outcomes in one order whatever order the nodes came in. */
const ORDER = ['success', 'error', 'skipped', 'canceled', 'passed', 'warned', 'failed'];
const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
const counts = (o: Record<string, number>) =>
  Object.entries(o).sort(([a], [b]) => rank(a) - rank(b)).map(([k, v]) => `${k} ${v}`).join(', ');

/** "12 nodes: success 11, error 1; tests: passed 3, failed 1" */
function outcomeLine(s: { nodes: number; outcomes: Record<string, number>; tests: Record<string, number>; freshness: Record<string, number> }): string {
  let line = `${plural(s.nodes, 'node')}${s.nodes ? `: ${counts(s.outcomes)}` : ''}`;
  if (Object.keys(s.tests).length) line += `; tests: ${counts(s.tests)}`;
  if (Object.keys(s.freshness).length) line += `; freshness: ${counts(s.freshness)}`;
  return line;
}

function fileLines(f: FileSummary): string[] {
  if (f.kind !== 'log') {
    const timing = outsideRunNote(f);
    return [`${f.file}: trace ${f.traceId} (${f.command}), ${outcomeLine(f)}`, `  ${describeManifestUse(f.manifest, f.invocationId, [f])}`, ...(timing ? [`  note: ${timing}`] : [])];
  }
  const lines = [`${f.file}: ${plural(f.lines, 'line')}, ${plural(f.invocations.length, 'invocation')}${f.badLines ? `, ${plural(f.badLines, 'non-JSON line')} ignored` : ''}`];
  for (const s of f.invocations)
    lines.push(`  trace ${s.traceId} (${s.command}), ${outcomeLine(s)}${s.queries ? `, ${plural(s.queries, 'query', 'queries')}` : ''}${s.cutOff ? ' [the log ends before the command did]' : s.interrupted ? ' [interrupted]' : ''}`);
  if (f.invocations.length) lines.push(`  ${describeManifestUse(f.manifest, f.invocations[0]!.invocationId, f.invocations)}`);
  return lines;
}

export function renderMigrateReport(r: MigrateReport): string {
  const lines = [...r.skipped.map((s) => `${s.path}: skipped: ${s.reason}`), ...r.files.flatMap(fileLines)];
  lines.push(`wrote ${plural(r.records, 'record')} to ${r.out}`);
  if (r.upstreamUnknown) {
    const withManifest = r.files.some((f) => f.manifest.path);
    lines.push(
      `note: ${plural(r.upstreamUnknown, 'skipped node')} without upstream_unique_id: ${
        withManifest
          ? 'no failed ancestor, nor failed test of one, in the manifest'
          : 'without a manifest a skip names its upstream only when the run had exactly one failure (--manifest FILE)'
      }`,
    );
  }
  for (const same of r.sameRun) {
    lines.push(`note: ${same.files.join(' and ')} hold the same run (trace ${same.traceId}): the output holds it once, as the reading commands keep it (the records of ${same.files[0]}, then what the others add)`);
  }
  return lines.join('\n') + '\n';
}

export const migrateCommand: CommandBody<Args> = {
  builder: (y) =>
    withOutputOptions(y, 'the file to write: .jsonl or .parquet (the extension picks the format)')
      .positional('files', listPositional('run_results.json, sources.json, JSON logs (logs/dbt.log, captured stdout): files, folders, globs'))
      .option('manifest', { type: 'string', describe: 'manifest.json for every input (default: the manifest.json beside each file): names the upstream of skips and node files' })
      .option('export-to-otlp', { type: 'boolean', default: false, describe: 'also stream to OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'the report: text for people, json for programs' })
      .option('jobs', { type: 'number', describe: `threads per run_results.json for JSONL output, 1 to ${JOBS_LIMIT} (default: up to 4 for files of 8 MiB or more, else 1)` })
      .example('$0 migrate target/ -o run.jsonl', 'target/run_results.json (and sources.json), with target/manifest.json')
      .example('$0 migrate logs/dbt.log -o run.parquet', 'a JSON log (dbt --log-format-file json), into Parquet'),
  handler: async (a) => {
    if (a.jobs !== undefined) wholeNumber('--jobs', a.jobs, 1, { max: JOBS_LIMIT, of: 'threads', example: '--jobs 2' });
    if (!a.files?.length) throw new UsageError('give at least one run_results.json or JSON log to translate');
    const out = outputPath({ output: a.output, projectDir: a['project-dir'] });
    const format = outFormat(out);
    if (a.jobs !== undefined && a.jobs > 1 && (format !== 'jsonl' || a['export-to-otlp']))
      process.stderr.write('note: --jobs splits runs only for JSONL output without --export-to-otlp; this migrate uses one thread\n');
    const r = await migrateFiles(a.files ?? [], { out, manifest: a.manifest, otlp: a['export-to-otlp'], jobs: a.jobs });
    // The report goes beside the data: to stderr when the telemetry itself is on stdout.
    const report = out === STDOUT ? process.stderr : process.stdout;
    if (a.format === 'json') report.write(JSON.stringify(r) + '\n');
    else report.write(renderMigrateReport({ ...r, out: outputLabel(out) }));
    // The export was asked for: its failure is exit 2, naming the endpoint, the output being complete.
    if (r.exportFailed) {
      process.stderr.write(`runlens: ${r.exportFailed} (${outputLabel(out)} is complete)\n`);
      process.exitCode = exitCodeFor('input');
    }
  },
};
