import type { CommandBody } from './command.js';
import { UsageError } from '../errors.js';
import { outputLabel, outputPath, STDOUT } from '../produce/output-path.js';
import { plural } from '../render/plural.js';
import { createProgress } from '../render/progress.js';
import { withOutputOptions, type OutputArgs } from './output.js';
import { wholeNumber } from './options.js';

/** Seeds are 32-bit: a larger one would give the output of another. */
const MAX_SEED = 2 ** 32 - 1;
/** Simulated threads: more than any warehouse runs a project on (each node is placed on the first free one). */
const MAX_THREADS = 256;

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
      .option('seed', { type: 'number', default: 1, describe: `same seed, same bytes (a whole number from 0 to ${MAX_SEED})` })
      .option('fail-rate', { type: 'number', default: 0.02, describe: 'probability that a node errors or a test fails' })
      .option('cache-rate', { type: 'number', default: 0.1, describe: 'probability that a model is reused from cache (runs after the first)' })
      .option('threads', { type: 'number', default: 8, describe: `simulated worker threads (1 to ${MAX_THREADS})` })
      .option('format', { choices: ['jsonl', 'parquet'] as const, describe: "must agree with -o's extension, which picks the format; with --project-dir and no -o: otel.jsonl or otel.parquet" })
      .option('detail', { type: 'boolean', default: true, describe: 'include DEBUG detail (compiled code, jinja log lines)' })
      .example('$0 generate -o run.jsonl --nodes 200 --fail-rate 0.05', 'one run of a 200-node project')
      .example('$0 generate --project-dir demo --format parquet --runs 3', 'three runs in demo/target/metadata/otel.parquet'),
  handler: async (a) => {
    const runs = wholeNumber('--runs', a.runs, 1);
    const nodes = wholeNumber('--nodes', a.nodes, 4);
    const seed = wholeNumber('--seed', a.seed, 0, { max: MAX_SEED });
    const threads = wholeNumber('--threads', a.threads, 1, { max: MAX_THREADS });
    for (const o of ['fail-rate', 'cache-rate'] as const) if (!(a[o] >= 0 && a[o] <= 1)) throw new UsageError(`--${o} must be between 0 and 1`);
    const output = outputPath({ output: a.output, projectDir: a['project-dir'], format: a.format });
    const { generate } = await import('../produce/generate/index.js');
    const bar = createProgress('generate');
    const count = (n: number) => n.toLocaleString('en-US');
    const t0 = Date.now();
    const r = await generate({
      output, format: a.format, runs, nodes, seed, failRate: a['fail-rate'],
      cacheRate: a['cache-rate'], threads, detail: a.detail, onProgress: (d, t) => bar.update(d / t, `${count(d)}/${count(t)} nodes`),
    });
    bar.done();
    const secs = (Date.now() - t0) / 1000;
    // The summary goes beside the data: to stderr when the telemetry itself is on stdout.
    const say = (s: string) => (output === STDOUT ? process.stderr : process.stdout).write(s);
    say(`wrote ${r.records} records (${plural(r.runs.length, 'run')}, ${r.format}) to ${outputLabel(output)} in ${secs.toFixed(1)}s\n`);
    for (const s of r.runs) say(`  ${s.invocationId}: ${plural(s.errors, 'error')}, ${plural(s.failedTests, 'failed test')}, ${s.skipped} skipped\n`);
  },
};
