import type { Argv } from 'yargs';
import type { CommandBody } from './command.js';
import { JobsClient, RUN_SUCCESS, WaitTimeout, type RunInfo } from '../client/jobs.js';
import { clientConfig, connectionOptions, withApiErrors, type ConnectionArgs } from '../client/cli-config.js';
import { formatOption, out, printFields, printJson, printListing, printTable, type ClientFormat } from '../client/output.js';
import { FoundError, InputError, UsageError } from '../errors.js';
import { parsePositiveSeconds } from '../service/cli-options.js';
import { parseId } from '../service/ids.js';
import { listOption, needs } from './options.js';
import { checkPaging, readListing } from './paging.js';

type Conn = ConnectionArgs & { format: ClientFormat };

const JOB_FIELDS = ['id', 'name', 'execute_steps', 'project_id', 'environment_id', 'dbt_version', 'state', 'created_at'];
const JOB_COLUMNS = ['id', 'name', 'execute_steps', 'created_at'];
const RUN_FIELDS = ['id', 'job_id', 'status_humanized', 'status_message', 'trigger.cause', 'created_at', 'started_at', 'finished_at', 'duration'];
const RUN_COLUMNS = ['id', 'status_humanized', 'trigger.cause', 'created_at', 'duration', 'status_message'];
const STEP_COLUMNS = ['index', 'name', 'status_humanized', 'exit_code', 'duration', 'telemetry_artifact'];

const client = (a: ConnectionArgs) => new JobsClient(clientConfig(a));
const withConn = <T>(y: Argv<T>) => connectionOptions(y).option('format', formatOption);

/** Job and run ids are positive integers; anything else is a usage error before any request. */
function idOf(what: 'JOB' | 'RUN', v: string | number): string {
  const s = String(v);
  if (parseId(s) === null) throw new UsageError(`${what}: expected a ${what === 'JOB' ? 'job' : 'run'} id (1, 2, ... up to ${Number.MAX_SAFE_INTEGER}), got "${s}"`);
  return s;
}

/** One run: its fields, then its steps (and their logs with --logs). */
function printRun(r: RunInfo, format: ClientFormat, logs = false): void {
  if (format === 'json') return printJson(r);
  printFields(r, RUN_FIELDS);
  if (!r.run_steps) return;
  out('');
  printTable(r.run_steps, STEP_COLUMNS, '(no steps yet)');
  if (logs) for (const s of r.run_steps) out(`\n--- step ${s.index}: ${s.name} (${s.status_humanized ?? s.status})\n${(s.logs ?? '').trimEnd()}`);
}

type CreateArgs = Conn & { name: string; step: string[]; 'project-id': number; 'environment-id': number; 'dbt-version'?: string };
type RunArgs = Conn & { job: string; cause: string; wait: boolean; interval: number; timeout?: number };

export const jobsCommand: CommandBody<object> = {
  builder: (y) =>
    y
      .command<CreateArgs>('create', 'create a job: its steps run in order, each a command the service allows (serve --step-commands)', (yy) =>
        withConn(yy)
          .option('name', { type: 'string', demandOption: true })
          .option('step', { ...listOption('a step command, in order', null), demandOption: true })
          .option('project-id', { type: 'number', default: 1 })
          .option('environment-id', { type: 'number', default: 1 })
          .option('dbt-version', { type: 'string', describe: 'the engine version the job declares (toolVersion and dbtVersion in events)' })
          .example('$0 jobs create --name nightly --step "runlens generate -o telemetry.jsonl"', 'prints the new job and its id'),
        async (a) => withApiErrors(async () => {
          const job = await client(a).create({
            name: a.name, execute_steps: a.step.map(String), project_id: a['project-id'], environment_id: a['environment-id'],
            ...(a['dbt-version'] ? { dbt_version: a['dbt-version'] } : {}),
          });
          if (a.format === 'json') printJson(job);
          else printFields(job, JOB_FIELDS);
        }))
      .command<Conn & { limit?: number; offset: number }>('list', 'list jobs (every page from --offset unless --limit)', (yy) =>
        withConn(yy).option('limit', { type: 'number', describe: 'at most this many (1-100)' }).option('offset', { type: 'number', default: 0 })
          .example('$0 jobs list', ''),
        async (a) => withApiErrors(async () => {
          const c = client(a);
          const { items, page } = await readListing(a, (offset, limit) => c.list(offset, limit), (offset) => c.listAll(offset));
          printListing(items, JOB_COLUMNS, a.format, 'jobs', page);
        }))
      .command<Conn & { job: string }>('get <job>', 'show one job', (yy) =>
        withConn(yy).positional('job', { type: 'string', demandOption: true, describe: 'job id' }).example('$0 jobs get 1 --format json', 'one object'),
        async (a) => withApiErrors(async () => {
          const job = await client(a).get(idOf('JOB', a.job));
          if (a.format === 'json') printJson(job);
          else printFields(job, JOB_FIELDS);
        }))
      .command<Conn & { job: string }>('delete <job>', 'delete a job: it cannot run any more; its runs and artifacts stay readable', (yy) =>
        withConn(yy).positional('job', { type: 'string', demandOption: true, describe: 'job id' }).example('$0 jobs delete 1', ''),
        async (a) => withApiErrors(async () => {
          const job = await client(a).delete(idOf('JOB', a.job));
          if (a.format === 'json') printJson(job);
          else out(`deleted job ${job.id} (${job.name})`);
        }))
      .command<RunArgs>('run <job>', 'start a run of a job; with --wait, follow it: exit 0 when it succeeded, 1 when it errored', (yy) =>
        withConn(yy).positional('job', { type: 'string', demandOption: true, describe: 'job id' })
          .option('cause', { type: 'string', default: 'Triggered by runlens jobs run', describe: 'why the run was started (the runReason of its events)' })
          .option('wait', { type: 'boolean', default: false, describe: 'follow the run until it has finished (steps done, telemetry stored)' })
          .option('interval', needs('wait', { type: 'number', default: 1, describe: '--wait: seconds between reads of the run' }))
          .option('timeout', needs('wait', { type: 'number', describe: '--wait: give up (exit 2) after this many seconds; the run goes on' }))
          .example('$0 jobs run 1 --wait', 'prints each status change on stderr, then the run and its steps')
          .example('$0 jobs run 1 --wait --format json | jq -r .status_humanized', ''),
        async (a) => withApiErrors(async () => {
          const job = idOf('JOB', a.job);
          const intervalMs = parsePositiveSeconds('--interval', a.interval);
          const timeoutMs = a.timeout === undefined ? undefined : parsePositiveSeconds('--timeout', a.timeout);
          const c = client(a);
          const started = await c.trigger(job, a.cause);
          if (!a.wait) {
            printRun(started, a.format);
            if (a.format === 'text') process.stderr.write(`follow it with \`runlens jobs run-status ${started.id}\`\n`);
            return;
          }
          let run: RunInfo;
          try {
            run = await c.waitFor(started.id, {
              intervalMs, timeoutMs,
              onChange: (r) => process.stderr.write(`run ${r.id}: ${r.status_humanized ?? r.status}\n`),
              onRetry: (e) => process.stderr.write(`runlens: ${e.message}; trying again\n`),
            });
          } catch (e) {
            const later = `\`runlens jobs run-status ${started.id}\` shows it later`;
            if (e instanceof WaitTimeout && e.noAnswer) throw new InputError(`run ${started.id}: the service did not answer ${e.noAnswer.request} before --timeout ${a.timeout} s ran out; ${later}`);
            if (e instanceof WaitTimeout) {
              const run = e.run ?? started;
              throw new InputError(`run ${started.id} is still ${run.status_humanized ?? run.status} after --timeout ${a.timeout} s; ${later}`);
            }
            throw e;
          }
          printRun(run, a.format);
          if (run.status !== RUN_SUCCESS) throw new FoundError(`run ${run.id} ${run.status_humanized ?? run.status}${run.status_message ? `: ${run.status_message}` : ''}`);
        }))
      .command<Conn & { job: string; limit: number; offset: number }>('runs <job>', "list a job's runs, newest first", (yy) =>
        withConn(yy).positional('job', { type: 'string', demandOption: true, describe: 'job id' })
          .option('limit', { type: 'number', default: 20, describe: 'at most this many (1-100)' }).option('offset', { type: 'number', default: 0 })
          .example('$0 jobs runs 1 --limit 5', 'the five newest runs of job 1'),
        async (a) => withApiErrors(async () => {
          checkPaging(a);
          const c = client(a);
          const job = idOf('JOB', a.job);
          const page = await c.runs(job, a.offset, a.limit);
          // The listing filters by job and so is empty for a job that does not exist: reading the
          // job says so (404, exit 2) rather than "(no runs)".
          if (page.total === 0) await c.get(job);
          printListing(page.items, RUN_COLUMNS, a.format, 'runs', { total: page.total, offset: a.offset });
        }))
      .command<Conn & { run: string; logs: boolean }>('run-status <run>', 'show one run with its steps', (yy) =>
        withConn(yy).positional('run', { type: 'string', demandOption: true, describe: 'run id' })
          .option('logs', { type: 'boolean', default: false, describe: "text: each step's log after the table" })
          .example('$0 jobs run-status 7 --logs', "the run, its steps and what each step printed"),
        async (a) => withApiErrors(async () => printRun(await client(a).run(idOf('RUN', a.run)), a.format, a.logs)))
      .demandCommand(1, 'name a jobs command: create, list, get, delete, run, runs, run-status')
      .example('$0 jobs list', 'the jobs of the account (--base-url, --account, --token or RUNLENS_* variables)')
      .example('$0 jobs run --help', "one subcommand's options"),
  handler: () => undefined,
};
