import type { CommandBody } from './command.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { plural } from '../render/plural.js';

interface Args extends ModelArgs {
  format: 'text' | 'json';
}

export const loadCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'text for people, json (files and totals) for programs' })
      .example('$0 load logs/ --db model.duckdb', 'load a folder into a model file; later: runlens gate --db model.duckdb')
      .example('$0 load samples/two-runs.jsonl', 'check that files load, and count what is in them'),
  handler: (a) =>
    withModel(a, async (db, report) => {
      const totals = await db.one<{ runs: number; spans: number; records: number }>(
        `SELECT (SELECT count(*) FROM runs)::INTEGER AS runs, (SELECT count(*) FROM spans)::INTEGER AS spans,
                (SELECT count(*) FROM record_rows WHERE record_type IS NOT NULL)::INTEGER AS records`,
      );
      if (a.format === 'json') {
        process.stdout.write(JSON.stringify({ ...report, model: totals, db: a.db ?? null }, null, 2) + '\n');
        return;
      }
      for (const f of report.files) {
        const skipped = (f.worseTaken ? `; ${plural(f.worseTaken, 'span')} already present took this file's worse outcome` : '')
          + (f.earlierSetAside ? `; ${plural(f.earlierSetAside, 'record')} of a translated run_results.json or log of the same run set aside` : '')
          + (f.skippedLines ? `, ${plural(f.skippedLines, f.format === 'parquet' ? 'row' : 'line')} skipped` : '');
        const aside = f.setAside ? `${plural(f.setAside, 'record')} set aside (the model holds the engine's telemetry of this run)` : '';
        // (a file that only made copies in the model worse added nothing either)
        const present = [f.alreadyPresent ? `${plural(f.alreadyPresent, 'record')} already present` : '', aside].filter(Boolean);
        const what = f.duplicate || f.records === 0
          ? `${present.length ? `${present.join(', ')}, nothing added` : 'no records'}${skipped}`
          : `${plural(f.records, 'record')}, ${plural(f.traces, 'trace')}${f.alreadyPresent ? `, ${f.alreadyPresent} already present` : ''}${aside ? `, ${aside}` : ''}${skipped}`;
        process.stdout.write(`${f.path} (${f.format}): ${what}\n`);
      }
      process.stdout.write(
        `model${a.db ? ` ${a.db}` : ''}: ${plural(totals?.records ?? 0, 'record')}, ${plural(totals?.spans ?? 0, 'span')}, ${plural(totals?.runs ?? 0, 'run')}\n`,
      );
    }, { writes: true }),
};
