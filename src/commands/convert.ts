import type { CommandBody } from './command.js';
import { plural } from '../render/plural.js';

interface Args {
  input: string;
  output: string;
}

export const convertCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .positional('input', { type: 'string', demandOption: true })
      .positional('output', { type: 'string', demandOption: true }),
  handler: async (a) => {
    const { convertFile } = await import('../produce/convert.js');
    const r = await convertFile(a.input, a.output);
    process.stdout.write(`wrote ${plural(r.records, 'record')} to ${a.output}\n`);
  },
};
