import type { Argv } from 'yargs';

/** A command module's export, whatever its arguments (a CommandBody<Args>, see ./command.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyBody = { builder: (y: Argv<object>) => unknown; handler: (a: any) => unknown };

export interface CommandEntry {
  /** heading the command is listed under in `runlens --help` */
  group: string;
  /** yargs usage: the name and its positionals */
  usage: string;
  describe: string;
  load(): Promise<AnyBody>;
}

/**
 * Every command of the CLI: its group, usage and description, and its module loaded on demand. Only
 * the command being run is loaded, so `--version`, `--help` and a mistyped name import nothing heavy.
 */
export const COMMANDS: Record<string, CommandEntry> = {
  runs: {
    group: 'Read telemetry',
    usage: 'runs [paths..]',
    describe: 'list the runs (one per trace / invocation) in the input',
    load: async () => (await import('./runs.js')).runsCommand,
  },
  tree: {
    group: 'Read telemetry',
    usage: 'tree [paths..]',
    describe: 'print the span tree of each run (or of --trace ID)',
    load: async () => (await import('./tree.js')).treeCommand,
  },
  'critical-path': {
    group: 'Read telemetry',
    usage: 'critical-path [paths..]',
    describe: "the chain of nodes that decided each phase's wall time; with --manifest the longest dependency path",
    load: async () => (await import('./critical-path.js')).criticalPathCommand,
  },
  report: {
    group: 'Read telemetry',
    usage: 'report [paths..]',
    describe: 'write one self-contained HTML report of a run (verdict, timeline, critical path, failures, trends)',
    load: async () => (await import('./report.js')).reportCommand,
  },
  query: {
    group: 'Read telemetry',
    usage: 'query [name] [paths..]',
    describe: 'run a saved query (see `runlens queries`) or --sql against the model',
    load: async () => (await import('./queries.js')).queryCommand,
  },
  queries: {
    group: 'Read telemetry',
    usage: 'queries',
    describe: 'list the saved queries and their parameters',
    load: async () => (await import('./queries.js')).queriesCommand,
  },
  load: {
    group: 'Read telemetry',
    usage: 'load [paths..]',
    describe: 'load telemetry into the model (kept in a DuckDB file with --db FILE)',
    load: async () => (await import('./load.js')).loadCommand,
  },
  explore: {
    group: 'Read telemetry',
    usage: 'explore [paths..]',
    describe: 'interactive terminal explorer: runs, span trees, details, queries, diffs',
    load: async () => (await import('./explore.js')).exploreCommand,
  },
  gate: {
    group: 'Check',
    usage: 'gate [paths..]',
    describe: 'CI gate: exit 1 when a run failed, never ended, or a node result matches --fail-on; else 0',
    load: async () => (await import('./gate.js')).gateCommand,
  },
  validate: {
    group: 'Check',
    usage: 'validate [paths..]',
    describe: "check telemetry files against the engine's record format (exit 1 on violations)",
    load: async () => (await import('./validate.js')).validateCommand,
  },
  migrate: {
    group: 'Translate and produce',
    usage: 'migrate [files..]',
    describe: "translate the older engine's run_results.json and JSON logs into telemetry",
    load: async () => (await import('./migrate.js')).migrateCommand,
  },
  record: {
    group: 'Translate and produce',
    usage: 'record [cmd..]',
    describe: "run an older-engine command and translate its JSON log as it runs",
    load: async () => (await import('./record.js')).recordCommandModule,
  },
  'map-status': {
    group: 'Translate and produce',
    usage: 'map-status <status>',
    describe: 'map an older-engine result status to node_outcome, skip reason and test_outcome',
    load: async () => (await import('./map-status.js')).mapStatusCommand,
  },
  generate: {
    group: 'Translate and produce',
    usage: 'generate',
    describe: 'write realistic telemetry of a synthetic project, the same for the same seed',
    load: async () => (await import('./generate.js')).generateCommand,
  },
  convert: {
    group: 'Translate and produce',
    usage: 'convert <input> <output>',
    describe: "convert telemetry between JSONL and the engine's Parquet layout",
    load: async () => (await import('./convert.js')).convertCommand,
  },
  receive: {
    group: 'Receive live',
    usage: 'receive',
    describe: "receive the engine's OTLP/HTTP stream into the model as it runs",
    load: async () => (await import('./receive.js')).receiveCommand,
  },
  serve: {
    group: 'Service',
    usage: 'serve',
    describe: 'run the job-run webhooks and run-artifacts service',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  accounts: {
    group: 'Service',
    usage: 'accounts <command>',
    describe: "manage service accounts in serve's data folder or database (safe while serve runs)",
    load: async () => (await import('./accounts.js')).accountsCommand,
  },
  tokens: {
    group: 'Service',
    usage: 'tokens <command>',
    describe: 'manage API tokens of an account (a token is shown once, stored hashed)',
    load: async () => (await import('./tokens.js')).tokensCommand,
  },
  webhooks: {
    group: 'Service',
    usage: 'webhooks <command>',
    describe: 'manage webhook subscriptions and their delivery log, verify signatures, receive events',
    load: async () => (await import('./webhooks.js')).webhooksCommand,
  },
  jobs: {
    group: 'Service',
    usage: 'jobs <command>',
    describe: 'manage jobs and their runs: create, list, delete, run and follow, read the steps and logs of a run (run-status --logs)',
    load: async () => (await import('./jobs.js')).jobsCommand,
  },
  artifacts: {
    group: 'Service',
    usage: 'artifacts <action>',
    describe: "download a run's telemetry artifacts through the v2 API",
    load: async () => (await import('./artifacts.js')).artifactsCommand,
  },
};

/** The command these arguments name: the first word that is not an option, before any `--`. */
export function commandWord(argv: string[]): string | undefined {
  const ours = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  return ours.find((a) => !a.startsWith('-'));
}

/** The command names closest to a mistyped one (edit distance, or a prefix of a name). */
export function nearestCommands(word: string): string[] {
  const scored = Object.keys(COMMANDS).map((name) => ({ name, d: name.startsWith(word) && word.length >= 2 ? 0 : editDistance(word, name) }));
  const best = Math.min(...scored.map((s) => s.d));
  return best <= Math.max(2, Math.floor(word.length / 3)) ? scored.filter((s) => s.d === best).map((s) => s.name) : [];
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
