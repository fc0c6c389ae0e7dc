/**
 * Start-up bench: `runlens --version`, `--help` and a gate on a bundled sample, each beside bare
 * node (`node -e 0`) and DuckDB's own start (a node process that loads @duckdb/node-api and opens
 * an in-memory instance, by import() and by require), all in the same run. Goals: --version and
 * --help within 100 ms of bare node; the gate within 2.5x of DuckDB's start by import(); the ratio to
 * the start by require (how runlens loads it, faster) is printed beside it.
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/startup.js [--rounds 15]`.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/src/cli.js');
const sample = path.join(root, 'samples/clean-build.jsonl');

/** DuckDB's start: the package loaded (`how`), an in-memory instance opened and queried once. */
const duckdbStart = (how: string) => `const { DuckDBInstance } = ${how};
const instance = await DuckDBInstance.create(':memory:');
const c = await instance.connect();
await c.run('SELECT 1');
c.closeSync();`;

const cases: Record<string, { args: string[]; code: number }> = {
  'node -e 0': { args: ['-e', '0'], code: 0 },
  // ESM import, as most programs load it; require skips Node's scan of its CommonJS files for exports
  'duckdb start (import)': { args: ['--input-type=module', '-e', duckdbStart("await import('@duckdb/node-api')")], code: 0 },
  'duckdb start (require)': { args: ['--input-type=module', '-e', `import { createRequire } from 'node:module';\n${duckdbStart("createRequire(process.cwd() + '/')('@duckdb/node-api')")}`], code: 0 },
  'runlens --version': { args: [cli, '--version'], code: 0 },
  'runlens --help': { args: [cli, '--help'], code: 0 },
  'runlens gate SAMPLE': { args: [cli, 'gate', sample], code: 0 },
};

function timeOnce(args: string[], code: number): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  const ms = performance.now() - t;
  if (r.status !== code) throw new Error(`node ${args.join(' ')}: exit ${r.status}, expected ${code}\n${r.stderr}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface StartupFigures {
  bare: number;
  /** DuckDB's start, loaded with require (as runlens loads it) */
  duckdb: number;
  /** DuckDB's start, loaded with import() (the goal's baseline) */
  duckdbImport: number;
  version: number;
  help: number;
  gate: number;
}

/** Every case once per round, in turn, so a slow minute of the machine touches all of them alike; medians. */
export async function runStartupBench(opts: { rounds?: number } = {}): Promise<StartupFigures> {
  const rounds = opts.rounds ?? 15;
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const [, c] of Object.entries(cases)) timeOnce(c.args, c.code); // warm the file cache
  for (let i = 0; i < rounds; i++) for (const [name, c] of Object.entries(cases)) times[name]!.push(timeOnce(c.args, c.code));
  const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<string, number>;
  const f: StartupFigures = {
    bare: m['node -e 0']!, duckdb: m['duckdb start (require)']!, duckdbImport: m['duckdb start (import)']!,
    version: m['runlens --version']!, help: m['runlens --help']!, gate: m['runlens gate SAMPLE']!,
  };
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  console.log(`startup: medians of ${rounds} rounds; bare node (node -e 0) ${ms(f.bare)}; DuckDB's start (loaded, an in-memory instance queried) ${ms(f.duckdb)} with require, ${ms(f.duckdbImport)} with import()`);
  console.log(`startup: runlens --version ${ms(f.version)} = bare node + ${ms(f.version - f.bare)} (goal <= +100 ms)`);
  console.log(`startup: runlens --help ${ms(f.help)} = bare node + ${ms(f.help - f.bare)} (goal <= +100 ms)`);
  console.log(
    `startup: runlens gate samples/clean-build.jsonl ${ms(f.gate)} = ${(f.gate / f.duckdbImport).toFixed(2)}x DuckDB's start with import() (goal <= 2.5x), ` +
      `${(f.gate / f.duckdb).toFixed(2)}x with require (which runlens uses)`,
  );
  return f;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--rounds');
  await runStartupBench({ rounds: i > 0 ? Number(process.argv[i + 1]) : undefined });
}
