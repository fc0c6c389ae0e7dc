import type { CommandModule } from 'yargs';
import { convertFile } from '../produce/convert.js';

interface Args {
  input: string;
  output: string;
}

export const convertCommand: CommandModule<object, Args> = {
  command: 'convert <input> <output>',
  describe: 'convert telemetry between JSONL (.jsonl, .jsonl.gz) and the engine Parquet layout (.parquet), by extension',
  builder: (y) =>
    y
      .positional('input', { type: 'string', demandOption: true })
      .positional('output', { type: 'string', demandOption: true }),
  handler: async (a) => {
    const r = await convertFile(a.input, a.output);
    process.stdout.write(`wrote ${r.records} records to ${a.output}\n`);
  },
};
