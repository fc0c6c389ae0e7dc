import type { CommandBody } from './command.js';
import { migrateFiles, type MigrateReport } from '../legacy/migrate.js';
import { UsageError } from '../errors.js';
import { outFormat } from '../legacy/sinks.js';
import { outputLabel, outputPath, STDOUT } from '../produce/output-path.js';
import { withOutputOptions, type OutputArgs } from './output.js';
import { plural } from '../render/plural.js';
import { listPositional } from './options.js';

interface Args extends OutputArgs {
  files?: string[];
  manifest?: string;
  'export-to-otlp': boolean;
  format: 'text' | 'json';
  jobs?: number;
}

const counts = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ');

export function renderMigrateReport(r: MigrateReport): string {
  const lines: string[] = [];
  for (const f of r.files) {
    if (f.kind === 'run_results') lines.push(`${f.file}: trace ${f.traceId} (${f.command}), ${plural(f.nodes, 'node')}: ${counts(f.outcomes)}`);
    else {
      lines.push(`${f.file}: ${plural(f.lines, 'line')}, ${plural(f.invocations.length, 'invocation')}${f.badLines ? `, ${plural(f.badLines, 'non-JSON line')} ignored` : ''}`);
      for (const s of f.invocations)
        lines.push(`  trace ${s.traceId} (${s.command}), ${plural(s.nodes, 'node')}: ${counts(s.outcomes) || 'none'}${s.interrupted ? ' [interrupted]' : ''}`);
    }
  }
  lines.push(`wrote ${plural(r.records, 'record')} to ${r.out}`);
  if (!r.manifest)
    lines.push(`note: no --manifest given, so upstream ids are unknown: a skipped node names its upstream only when the run had exactly one failure${r.upstreamUnknown ? ` (${plural(r.upstreamUnknown, 'skipped node')} left without upstream_unique_id)` : ''}`);
  else if (r.upstreamUnknown) lines.push(`note: ${plural(r.upstreamUnknown, 'skipped node')} ${r.upstreamUnknown === 1 ? 'has' : 'have'} no failed ancestor in the manifest: upstream id unknown`);
  return lines.join('\n') + '\n';
}

export const migrateCommand: CommandBody<Args> = {
  builder: (y) =>
    withOutputOptions(y, 'the file to write: .jsonl or .parquet (the extension picks the format)')
      .positional('files', listPositional('run_results.json files and JSON log streams (logs/dbt.log, captured stdout)'))
      .option('manifest', { type: 'string', describe: 'manifest.json: its depends_on names the upstream node of each skip' })
      .option('export-to-otlp', { type: 'boolean', default: false, describe: 'also stream to OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)' })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'the report: text for people, json for programs' })
      .option('jobs', { type: 'number', describe: 'threads per run_results.json for JSONL output (default: up to 4 for files of 8 MiB or more, else 1)' })
      .example('$0 migrate target/run_results.json --manifest target/manifest.json -o run.jsonl', 'one run, with upstream ids from the manifest')
      .example('$0 migrate logs/dbt.log -o run.parquet', 'a --log-format json log, into Parquet'),
  handler: async (a) => {
    if (a.jobs !== undefined && !(Number.isInteger(a.jobs) && a.jobs >= 1)) throw new UsageError(`--jobs: expected a whole number of threads, 1 or more (for example --jobs 2); got ${Number.isNaN(a.jobs) ? 'something else' : a.jobs}`);
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
  },
};
