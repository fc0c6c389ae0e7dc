import type { CommandBody } from './command.js';

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
    process.stdout.write(`wrote ${r.records} records to ${a.output}\n`);
  },
};
