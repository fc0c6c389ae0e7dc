import type { CommandBody } from './command.js';
import { recordCommand } from '../legacy/record.js';
import type { LiveLines } from '../legacy/log-file.js';
import { outFormat } from '../legacy/sinks.js';
import { outputLabel, outputPath } from '../produce/output-path.js';
import { plural } from '../render/plural.js';
import { withOutputOptions, type OutputArgs } from './output.js';
import { listPositional } from './options.js';
import { exitCodeFor } from '../exit-codes.js';
import { UsageError } from '../errors.js';
import { argvRefusal } from '../service/command-line.js';
import { jobStepCommands } from '../service/job-step.js';

interface Args extends OutputArgs {
  manifest?: string;
  'export-to-otlp': boolean;
  cmd?: string[];
}

export const recordCommandModule: CommandBody<Args> = {
  builder: (y) =>
    withOutputOptions(y, 'the file to write: .jsonl (written as events arrive) or .parquet (written when the command ends)')
      .positional('cmd', listPositional('the command to run, after --'))
      .option('manifest', { type: 'string', describe: 'manifest.json: its depends_on names the upstream node of each skip' })
      .option('export-to-otlp', { type: 'boolean', default: false, describe: 'also stream to OTLP (OTEL_EXPORTER_OTLP_ENDPOINT)' })
      .example('$0 record -o run.jsonl -- dbt build --select tag:nightly', 'adds --log-format json when absent')
      .example('$0 record --project-dir . -- dbt build', "writes ./logs/otel.jsonl, where the new engine writes its own")
      .example('$0 record -o run.parquet -- cat logs/captured.jsonl', 'replay a recorded JSON log'),
  handler: async (a) => {
    const out = outputPath({ output: a.output, projectDir: a['project-dir'] });
    outFormat(out);
    const argv = (a.cmd ?? []).map(String);
    // In a job step, the command is checked as a step of its own (the job was checked too, on its text).
    const allowed = jobStepCommands();
    const refusal = allowed && argv.length ? argvRefusal(argv, allowed) : null;
    if (refusal) throw new UsageError(`in a job step, record runs only what a step may run: ${refusal}`);
    const r = await recordCommand({ out, argv, otlp: a['export-to-otlp'], manifest: a.manifest });
    const exited = r.code !== null ? `the command exited ${r.code}${r.stoppedBy ? ` after ${r.stoppedBy}` : ''}` : `the command was ended by ${r.signal}`;
    if (r.notWritten) {
      // what is in the file is not the run: said, and exit 2 whatever the command's own exit
      process.stderr.write(`runlens: ${outputLabel(out)}: not written in full (${r.notWritten}); ${exited}\n`);
      process.exitCode = exitCodeFor('input');
      return;
    }
    const nodes = r.invocations.reduce((n, s) => n + s.nodes, 0);
    const canceled = r.invocations.reduce((n, s) => n + (s.outcomes.canceled ?? 0), 0);
    process.stderr.write(
      `runlens: recorded ${plural(r.invocations.length, 'invocation')}, ${plural(nodes, 'node')}${canceled ? ` (${canceled} canceled)` : ''}, ` +
        `${plural(r.records, 'record')} to ${outputLabel(out)}; ${exited}\n`,
    );
    liveLinesSaid(r.unread, 'that began as JSON but could not be read (no record)', true);
    liveLinesSaid(r.notUtf8, 'not valid UTF-8 (read with U+FFFD in place of the bad bytes)', false);
    if (r.records === 0 && r.lines > 0) {
      const why = r.badLines === r.lines ? 'none was a dbt JSON log event (the engine writes them with --log-format json)' : 'none gave a record';
      process.stderr.write(`runlens: warning: the command printed ${plural(r.lines, 'line')} but ${why}: nothing was recorded\n`);
    }
    process.exitCode = r.exitCode;
  },
};

/** Lines of a live command's output read short of what they held: a warning (the command is not stopped for them). */
function liveLinesSaid(l: LiveLines, what: string, reasons: boolean): void {
  if (!l.count) return;
  const lines = l.first.map((b) => `line ${b.line}${reasons ? ` (${b.reason})` : ''}`).join(', ');
  const more = l.count > l.first.length ? `, and ${plural(l.count - l.first.length, 'more line')}` : '';
  process.stderr.write(`runlens: warning: the command's output had ${plural(l.count, 'line')} ${what}: ${lines}${more}\n`);
}
