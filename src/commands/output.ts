/** The output options of the commands that write telemetry: -o/--output (alias --out) and --project-dir. */
import type { Argv } from 'yargs';

export interface OutputArgs {
  output?: string;
  'project-dir'?: string;
}

export function withOutputOptions<T>(y: Argv<T>, what: string) {
  return y
    .option('output', {
      alias: ['o', 'out'],
      type: 'string',
      requiresArg: true,
      describe: `${what}; relative to the working folder; - writes JSONL to stdout`,
    })
    .option('project-dir', {
      type: 'string',
      requiresArg: true,
      describe: "write in the engine's layout under this project folder: logs/NAME (JSONL) or target/metadata/NAME (Parquet), NAME from -o (a file name, no folder) or otel.jsonl/otel.parquet",
    });
}
