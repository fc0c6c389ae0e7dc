import type { CommandBody } from './command.js';
import { RUN_COLUMNS, listRuns } from '../analyze/runs.js';
import { renderTable, type TableFormat } from '../render/table.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';

interface Args extends ModelArgs {
  format: TableFormat;
}

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
      const view = rows.map((r) => ({ ...r, failed: r.failed ? 'FAILED' : '' }));
      process.stdout.write(renderTable({ columns: [...RUN_COLUMNS], rows: a.format === 'table' ? view : rows }, a.format));
    }),
};
