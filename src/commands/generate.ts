import type { CommandBody } from './command.js';
import { UsageError } from '../errors.js';
import { outputLabel, outputPath, STDOUT } from '../produce/output-path.js';
import { plural } from '../render/plural.js';
import { withOutputOptions, type OutputArgs } from './output.js';

interface Args extends OutputArgs {
  runs: number;
  nodes: number;
  seed: number;
  'fail-rate': number;
  'cache-rate': number;
  threads: number;
  format?: 'jsonl' | 'parquet';
  detail: boolean;
}

export const generateCommand: CommandBody<Args> = {
  builder: (y) =>
    withOutputOptions(y, 'the file to write: .jsonl, .jsonl.gz or .parquet')
      .option('runs', { type: 'number', default: 1, describe: 'invocations of the same project, one after another' })
      .option('nodes', { type: 'number', default: 50, describe: 'nodes in the project (seeds, models, snapshots, tests, unit tests)' })
      .option('seed', { type: 'number', default: 1, describe: 'same seed, same bytes' })
      .option('fail-rate', { type: 'number', default: 0.02, describe: 'probability that a node errors or a test fails' })
      .option('cache-rate', { type: 'number', default: 0.1, describe: 'probability that a model is reused from cache (runs after the first)' })
      .option('threads', { type: 'number', default: 8, describe: 'simulated worker threads' })
      .option('format', { choices: ['jsonl', 'parquet'] as const, describe: 'default: from the output extension' })
      .option('detail', { type: 'boolean', default: true, describe: 'include DEBUG detail (compiled code, jinja log lines)' })
      .example('$0 generate -o run.jsonl --nodes 200 --fail-rate 0.05', 'one run of a 200-node project')
      .example('$0 generate --project-dir demo --format parquet --runs 3', 'three runs in demo/target/metadata/otel.parquet'),
  handler: async (a) => {
    if (!(a.nodes >= 4)) throw new UsageError('--nodes must be at least 4');
    if (!(a.runs >= 1)) throw new UsageError('--runs must be at least 1');
    if (!(a['fail-rate'] >= 0 && a['fail-rate'] <= 1)) throw new UsageError('--fail-rate must be between 0 and 1');
    const output = outputPath({ output: a.output, projectDir: a['project-dir'], format: a.format });
    const [{ generate }, { progressBar }] = await Promise.all([import('../produce/generate/index.js'), import('../produce/progress.js')]);
    const bar = progressBar('generate');
    const t0 = Date.now();
    const r = await generate({
      output, format: a.format, runs: Math.floor(a.runs), nodes: Math.floor(a.nodes), seed: a.seed, failRate: a['fail-rate'],
      cacheRate: a['cache-rate'], threads: Math.max(1, Math.floor(a.threads)), detail: a.detail, onProgress: (d, t) => bar.update(d, t),
    });
    bar.done();
    const secs = (Date.now() - t0) / 1000;
    // The summary goes beside the data: to stderr when the telemetry itself is on stdout.
    const say = (s: string) => (output === STDOUT ? process.stderr : process.stdout).write(s);
    say(`wrote ${r.records} records (${plural(r.runs.length, 'run')}, ${r.format}) to ${outputLabel(output)} in ${secs.toFixed(1)}s\n`);
    for (const s of r.runs) say(`  ${s.invocationId}: ${plural(s.errors, 'error')}, ${plural(s.failedTests, 'failed test')}, ${s.skipped} skipped\n`);
  },
};
