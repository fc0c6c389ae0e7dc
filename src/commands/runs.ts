import type { CommandBody } from './command.js';
import { RUN_COLUMNS, RUN_FIELDS, listRuns } from '../analyze/runs.js';
import { renderTable, type TableFormat, type TableLayout } from '../render/table.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';

interface Args extends ModelArgs {
  format: TableFormat;
}

/** On a narrow terminal the table keeps these first (the last ones are left out first). */
const RUNS_LAYOUT: TableLayout = {
  priority: ['trace_id', 'started_at', 'failed', 'error', 'tests_failed', 'command', 'duration_s', 'nodes', 'skipped', 'success', 'tests_passed', 'canceled', 'tests_warned', 'ended', 'engine_version'],
  columns: { started_at: { min: 16, prefix: true }, engine_version: { min: 20 } },
};

export const runsCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('format', { choices: ['table', 'json', 'csv'] as const, default: 'table' as const, describe: 'table for people (fits the terminal), json or csv for programs (every column)' })
      .example('$0 runs samples/two-runs.jsonl', 'one line per run')
      .example('$0 runs logs/ --format json', 'every run in a folder, as JSON'),
  handler: (a) =>
    withModel(a, async (db) => {
      const rows = await listRuns(db, { newestFirst: true });
      if (rows.length === 0 && a.format === 'table') {
        process.stderr.write('runlens: no runs in the input\n');
        return;
      }
      if (a.format !== 'table') {
        process.stdout.write(renderTable({ columns: [...RUN_FIELDS], rows }, a.format));
        return;
      }
      // For people: a readable time, FAILED where a run failed, and a duration that cannot be (the
      // invocation ends before it starts) kept as it is and said to be so.
      const view = rows.map((r) => ({
        ...r,
        started_at: String(r.started_at ?? '').replace('T', ' ').replace(/\.\d+Z$/, ''),
        failed: r.failed ? 'FAILED' : '',
        ...(typeof r.duration_s === 'number' && r.duration_s < 0 ? { duration_s: `${r.duration_s} (ends before it starts)` } : {}),
      }));
      process.stdout.write(renderTable({ columns: [...RUN_COLUMNS], rows: view }, 'table', RUNS_LAYOUT));
    }),
};
