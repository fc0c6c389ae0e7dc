import { writeFileSync } from 'node:fs';
import type { CommandBody } from './command.js';
import { buildReportData } from '../analyze/report/data.js';
import { renderReportHtml } from '../analyze/report/html.js';
import { InputError, errorMessage } from '../errors.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';

interface Args extends ModelArgs {
  out: string;
  trace?: string;
}

export const reportCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('out', { alias: 'o', type: 'string', demandOption: true, describe: 'the HTML file to write' })
      .option('trace', { type: 'string', describe: 'the run: trace id, invocation id, or a unique prefix (default: the most recent run)' }),
  handler: (a) =>
    withModel(a, async (db) => {
      const data = await buildReportData(db, { trace: a.trace });
      const html = renderReportHtml(data);
      try {
        writeFileSync(a.out, html);
      } catch (e) {
        throw new InputError(`cannot write the report: ${errorMessage(e)}`, a.out);
      }
      process.stdout.write(`wrote ${a.out} (${(html.length / 1024).toFixed(0)} KiB): run ${data.run.trace_id}, ${data.gate.passed ? 'passed' : 'FAILED'}\n`);
    }),
};
