import type { CommandBody } from './command.js';
import { FoundError } from '../errors.js';

interface Args {
  paths: string[];
  format: 'text' | 'json';
  warnings: boolean;
}

export const validateCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .positional('paths', { type: 'string', array: true, demandOption: true })
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const })
      .option('warnings', { type: 'boolean', default: true, describe: 'list warnings (unknown event types, unpaired spans, missing parents)' }),
  handler: async (a) => {
    const { formatIssue, validatePaths } = await import('../produce/validate.js');
    const reports = await validatePaths(a.paths);
    const violations = reports.reduce((n, r) => n + r.violations, 0);
    const warnings = reports.reduce((n, r) => n + r.warnings, 0);
    if (a.format === 'json') {
      process.stdout.write(JSON.stringify({ ok: violations === 0, violations, warnings, files: reports }, null, 2) + '\n');
    } else {
      for (const r of reports) for (const i of r.issues) if (a.warnings || i.severity === 'violation') process.stdout.write(formatIssue(i) + '\n');
      const records = reports.reduce((n, r) => n + r.records, 0);
      process.stderr.write(`${reports.length} file${reports.length === 1 ? '' : 's'}, ${records} records: ${violations} violation${violations === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}\n`);
    }
    if (violations > 0) throw new FoundError('');
  },
};
