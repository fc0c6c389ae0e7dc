import type { CommandBody } from './command.js';
import { UsageError } from '../errors.js';

interface Args {
  output: string;
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
    y
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'output file (.jsonl, .jsonl.gz or .parquet)' })
      .option('runs', { type: 'number', default: 1, describe: 'invocations of the same project, one after another' })
      .option('nodes', { type: 'number', default: 50, describe: 'nodes in the project (seeds, models, snapshots, tests, unit tests)' })
      .option('seed', { type: 'number', default: 1, describe: 'same seed, same bytes' })
      .option('fail-rate', { type: 'number', default: 0.02, describe: 'probability that a node errors or a test fails' })
      .option('cache-rate', { type: 'number', default: 0.1, describe: 'probability that a model is reused from cache (runs after the first)' })
      .option('threads', { type: 'number', default: 8, describe: 'simulated worker threads' })
      .option('format', { choices: ['jsonl', 'parquet'] as const, describe: 'default: from the output extension' })
      .option('detail', { type: 'boolean', default: true, describe: 'include DEBUG detail (compiled code, jinja log lines)' }),
  handler: async (a) => {
    if (!(a.nodes >= 4)) throw new UsageError('--nodes must be at least 4');
    if (!(a.runs >= 1)) throw new UsageError('--runs must be at least 1');
    if (!(a['fail-rate'] >= 0 && a['fail-rate'] <= 1)) throw new UsageError('--fail-rate must be between 0 and 1');
    const [{ generate }, { progressBar }] = await Promise.all([import('../produce/generate/index.js'), import('../produce/progress.js')]);
    const bar = progressBar('generate');
    const t0 = Date.now();
    const r = await generate({
      output: a.output, format: a.format, runs: Math.floor(a.runs), nodes: Math.floor(a.nodes), seed: a.seed, failRate: a['fail-rate'],
      cacheRate: a['cache-rate'], threads: Math.max(1, Math.floor(a.threads)), detail: a.detail, onProgress: (d, t) => bar.update(d, t),
    });
    bar.done();
    const secs = (Date.now() - t0) / 1000;
    process.stdout.write(`wrote ${r.records} records (${r.runs.length} run${r.runs.length === 1 ? '' : 's'}, ${r.format}) to ${r.output} in ${secs.toFixed(1)}s\n`);
    for (const s of r.runs) process.stdout.write(`  ${s.invocationId}: ${s.errors} errors, ${s.failedTests} failed tests, ${s.skipped} skipped\n`);
  },
};
