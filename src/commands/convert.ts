import type { CommandBody } from './command.js';
import { plural } from '../render/plural.js';
import { createProgress, progressEnabled } from '../render/progress.js';

interface Args {
  input: string;
  output: string;
}

export const convertCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .positional('input', { type: 'string', demandOption: true, describe: 'a telemetry file: .jsonl, .jsonl.gz or .parquet' })
      .positional('output', { type: 'string', demandOption: true, describe: 'the file to write; its extension picks the format (.jsonl, .jsonl.gz, .parquet); - writes JSONL to stdout' })
      .example('$0 convert logs/otel.jsonl otel.parquet', "JSONL to the engine's Parquet layout")
      .example('$0 convert samples/clean-build.parquet clean.jsonl.gz', 'Parquet to gzipped JSONL')
      .example('$0 convert samples/clean-build.parquet - | jq .name', 'Parquet to JSONL on stdout'),
  handler: async (a) => {
    const { convertFile } = await import('../produce/convert.js');
    const bar = createProgress('converting');
    let r: { records: number };
    try {
      r = await convertFile(a.input, a.output, { onRead: progressEnabled() ? (f) => bar.update(f, a.input) : undefined });
    } finally {
      bar.done();
    }
    // the summary goes beside the data: to stderr when the records are on stdout
    if (a.output === '-') await new Promise<void>((res) => process.stdout.write('', () => res()));
    (a.output === '-' ? process.stderr : process.stdout).write(`wrote ${plural(r.records, 'record')} to ${a.output === '-' ? 'stdout' : a.output}\n`);
  },
};
