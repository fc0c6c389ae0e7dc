import type { CommandBody } from './command.js';
import { FoundError, UsageError } from '../errors.js';
import { plural } from '../render/plural.js';
import { createProgress, progressEnabled } from '../render/progress.js';
import { listPositional, wholeNumber } from './options.js';

interface Args {
  paths?: string[];
  format: 'text' | 'json';
  warnings: boolean;
  'max-violations': number;
}

export const validateCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .positional('paths', listPositional('telemetry files (JSONL, .gz, Parquet), folders (searched for them) or globs'))
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'json: every file with its counts and listed issues' })
      .option('warnings', { type: 'boolean', default: true, describe: 'list warnings (unknown event types, unpaired spans, missing parents); --no-warnings hides them' })
      .option('max-violations', { type: 'number', default: 100, describe: 'violations (and warnings) listed per file; the rest are counted' })
      .example('$0 validate logs/otel.jsonl', 'check one file')
      .example("$0 validate target/ 'runs/**/*.parquet' --no-warnings", 'every telemetry file in a folder, and a glob'),
  handler: async (a) => {
    const max = a['max-violations'];
    wholeNumber('--max-violations', max, 0);
    if (!a.paths?.length) throw new UsageError('give at least one PATH: a telemetry file, a folder or a glob');
    const { formatIssue, validatePaths } = await import('../produce/validate.js');
    const bar = createProgress('validating');
    let reports: Awaited<ReturnType<typeof validatePaths>>;
    try {
      reports = await validatePaths(a.paths ?? [], {
        maxIssues: max,
        onSkip: (p, why) => {
          bar.done();
          process.stderr.write(`runlens: ${p}: skipped: ${why}\n`);
        },
        onRead: progressEnabled() ? (p, f) => bar.update(f, p) : undefined,
      });
    } finally {
      bar.done();
    }
    const violations = reports.reduce((n, r) => n + r.violations, 0);
    const warnings = reports.reduce((n, r) => n + r.warnings, 0);
    if (a.format === 'json') {
      process.stdout.write(JSON.stringify({ ok: violations === 0, violations, warnings, files: reports }, null, 2) + '\n');
    } else {
      for (const r of reports) {
        const shown = r.issues.filter((i) => a.warnings || i.severity === 'violation');
        for (const i of shown) process.stdout.write(formatIssue(i) + '\n');
        const moreViolations = r.violations - r.issues.filter((i) => i.severity === 'violation').length;
        const moreWarnings = a.warnings ? r.warnings - r.issues.filter((i) => i.severity === 'warning').length : 0;
        const more = [moreViolations ? plural(moreViolations, 'more violation') : '', moreWarnings ? plural(moreWarnings, 'more warning') : ''].filter(Boolean);
        if (more.length) process.stdout.write(`... and ${more.join(' and ')} in ${r.file} (--max-violations to list more)\n`);
      }
      const records = reports.reduce((n, r) => n + r.records, 0);
      process.stderr.write(`${plural(reports.length, 'file')}, ${plural(records, 'record')}: ${plural(violations, 'violation')}, ${plural(warnings, 'warning')}\n`);
    }
    if (violations > 0) throw new FoundError('');
  },
};
