import type { CommandModule } from 'yargs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCommand = CommandModule<any, any>;

/**
 * Every command of the CLI, loaded on demand: a command's module (and what it imports: DuckDB,
 * fastify, ink, OpenTelemetry...) is only loaded when that command runs, which keeps start-up short.
 * Each module parses its flags, calls core code and renders.
 */
export const commandLoaders: Record<string, () => Promise<AnyCommand>> = {
  load: async () => (await import('./load.js')).loadCommand,
  runs: async () => (await import('./runs.js')).runsCommand,
  tree: async () => (await import('./tree.js')).treeCommand,
  'critical-path': async () => (await import('./critical-path.js')).criticalPathCommand,
  report: async () => (await import('./report.js')).reportCommand,
  queries: async () => (await import('./queries.js')).queriesCommand,
  query: async () => (await import('./queries.js')).queryCommand,
  gate: async () => (await import('./gate.js')).gateCommand,
  explore: async () => (await import('./explore.js')).exploreCommand,
  'map-status': async () => (await import('./map-status.js')).mapStatusCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  record: async () => (await import('./record.js')).recordCommandModule,
  generate: async () => (await import('./generate.js')).generateCommand,
  convert: async () => (await import('./convert.js')).convertCommand,
  validate: async () => (await import('./validate.js')).validateCommand,
  receive: async () => (await import('./receive.js')).receiveCommand,
  serve: async () => (await import('./serve.js')).serveCommand,
  accounts: async () => (await import('./accounts.js')).accountsCommand,
  tokens: async () => (await import('./tokens.js')).tokensCommand,
  webhooks: async () => (await import('./webhooks.js')).webhooksCommand,
  jobs: async () => (await import('./jobs.js')).jobsCommand,
  artifacts: async () => (await import('./artifacts.js')).artifactsCommand,
};

/** The commands needed for these arguments: just the named one, or all of them (help, unknown names). */
export async function commandsFor(argv: string[]): Promise<AnyCommand[]> {
  const ours = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv; // after --: a child command's args
  const first = ours.find((a) => !a.startsWith('-'));
  const one = first !== undefined ? commandLoaders[first] : undefined;
  if (one && !ours.includes('--help') && !ours.includes('-h')) return [await one()];
  return Promise.all(Object.values(commandLoaders).map((l) => l()));
}
