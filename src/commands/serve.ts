import type { CommandBody } from './command.js';
import {
  DEFAULT_STEP_COMMANDS, dataDirOf, databaseUrlOf, openStore, parsePositiveSeconds, parseRetryDelays, parseStepCommands, redact,
} from '../service/cli-options.js';
import { UsageError } from '../errors.js';
import { plural } from '../render/plural.js';

interface Args {
  port: number;
  host: string;
  data?: string;
  'database-url'?: string;
  'claim-lease': number;
  'retry-delays': string;
  'delivery-timeout': number;
  'allow-private-targets': boolean;
  'step-commands': string;
  log: boolean;
}

export const serveCommand: CommandBody<Args> = {
  builder: (y) =>
    y
      .option('port', { type: 'number', default: 8080, describe: 'port to listen on (0 picks a free one)' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on (0.0.0.0 for all interfaces)' })
      .option('data', { type: 'string', describe: 'data folder (SQLite database, run folders); default $RUNLENS_DATA or ./runlens-data' })
      .option('database-url', { type: 'string', describe: 'PostgreSQL store shared by several serve processes (env RUNLENS_DATABASE_URL); default: SQLite in --data' })
      .option('claim-lease', { type: 'number', default: 30, describe: 'PostgreSQL: seconds past the delivery timeout before another process retakes the deliveries of a process that died, and closes its runs' })
      .option('retry-delays', { type: 'string', default: '10,60,300,1800', describe: 'seconds to wait before delivery attempts 2, 3, 4 and 5' })
      .option('delivery-timeout', { type: 'number', default: 10, describe: 'seconds an endpoint has to answer; a later answer is a failure' })
      .option('allow-private-targets', { type: 'boolean', default: false, describe: 'allow deliveries to private, loopback and link-local addresses (local development)' })
      .option('step-commands', { type: 'string', default: DEFAULT_STEP_COMMANDS.join(','), describe: 'executables job steps may run' })
      .option('log', { type: 'boolean', default: false, describe: 'log each HTTP request (JSON lines on stdout)' })
      .example('$0 serve --data ./runlens-data', 'SQLite in a folder; then runlens accounts create NAME')
      .example('$0 serve --database-url postgres://runlens@db/runlens --port 8080', 'several serve processes sharing PostgreSQL'),
  handler: async (a) => {
    if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535) throw new UsageError(`--port: expected 0..65535, got ${a.port}`);
    const dataDir = dataDirOf(a.data);
    const retryDelaysMs = parseRetryDelays(a['retry-delays']);
    const deliveryTimeoutMs = parsePositiveSeconds('--delivery-timeout', a['delivery-timeout']);
    const leaseMarginMs = parsePositiveSeconds('--claim-lease', a['claim-lease']);
    const stepCommands = parseStepCommands(a['step-commands']);
    const store = await openStore(a);
    await store.claimForServe().catch(async (e: unknown) => {
      await store.close();
      throw e;
    });
    const url0 = databaseUrlOf(a['database-url']);
    const { createService } = await import('../service/server.js');
    const svc = await createService({
      dataDir,
      store,
      leaseMarginMs,
      retryDelaysMs,
      deliveryTimeoutMs,
      allowPrivateTargets: a['allow-private-targets'],
      stepCommands,
      logger: a.log,
    });
    let url: string;
    try {
      url = await svc.listen(a.port, a.host);
    } catch (e) {
      await svc.close();
      await store.close();
      const code = (e as { code?: string }).code;
      if (code === 'EADDRINUSE') throw new UsageError(`--port ${a.port}: the port is in use; choose another (or 0)`);
      throw e;
    }
    process.stderr.write(`runlens serve: listening on ${url} (${url0 ? `database ${redact(url0)}, ` : ''}data ${dataDir})\n`);
    await new Promise<void>((resolve) => {
      // Steps run in process groups of their own, which a Ctrl-C does not reach: stopping at once
      // stops them too, then serve ends by the signal as it would without a handler.
      const force = (signal: NodeJS.Signals) => {
        svc.runner.stopSteps(signal);
        process.off('SIGINT', force).off('SIGTERM', force);
        process.kill(process.pid, signal);
      };
      const stop = () => {
        // A step that hangs keeps serve waiting: the message says for what, and a second signal
        // stops it at once; the next start closes those runs as errored.
        process.off('SIGINT', stop).off('SIGTERM', stop).on('SIGINT', force).on('SIGTERM', force);
        const runs = svc.runner.inProgress;
        const waiting = runs ? `waiting for ${plural(runs, 'run')} in progress to finish (a second signal stops at once), then for deliveries in flight`
          : 'finishing deliveries in flight';
        process.stderr.write(`runlens serve: stopping: the API closes; ${waiting}\n`);
        svc.close().then(() => store.close()).then(resolve, resolve);
      };
      process.on('SIGINT', stop).on('SIGTERM', stop);
    });
  },
};
