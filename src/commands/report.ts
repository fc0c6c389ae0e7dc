import type { CommandBody } from './command.js';
import { buildReportData } from '../analyze/report/data.js';
import { renderReportHtml } from '../analyze/report/html.js';
import { withModel, withModelOptions, type ModelArgs } from './model-args.js';
import { valueOption } from './options.js';

interface Args extends ModelArgs {
  output: string;
  trace?: string;
}

export const reportCommand: CommandBody<Args> = {
  builder: (y) =>
    withModelOptions(y)
      .option('output', { alias: ['o', 'out'], type: 'string', requiresArg: true, demandOption: true, describe: 'the HTML file to write (its folder is created); - writes it to stdout' })
      .option('trace', valueOption('the run: trace id, invocation id, or a unique prefix (default: the most recent run)'))
      .example('$0 report samples/failed-build.jsonl -o report.html', 'then open report.html in a browser')
      .example('$0 report runs/ --trace 019cadc6 -o -', 'one run of a folder, the HTML on stdout'),
  handler: async (a) => {
    const [{ expandPaths }, { refuseOutputOverInput, writeOutputFile, writeStdout }] = await Promise.all([import('../ingest/detect.js'), import('../produce/output-path.js')]);
    if (a.output !== '-') refuseOutputOverInput(a.output, [...(await expandPaths(a.paths ?? [])), ...(a.db ? [a.db] : [])]);
    return withModel(a, async (db) => {
      const data = await buildReportData(db, { trace: a.trace });
      const html = Buffer.from(renderReportHtml(data));
      // said only once written: a stdout that fails or closes early ends the command first (cli.ts)
      if (a.output === '-') await writeStdout(html);
      else await writeOutputFile(a.output, html);
      (a.output === '-' ? process.stderr : process.stdout).write(
        `wrote ${a.output === '-' ? 'stdout' : a.output} (${(html.length / 1024).toFixed(0)} KiB): run ${data.run.trace_id}, ${data.gate.passed ? 'passed' : 'FAILED'}\n`,
      );
    });
  },
};
