import type { CommandBody } from './command.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ArtifactsClient, RunNotFinished, telemetryArtifactName } from '../client/artifacts.js';
import { clientConfig, connectionOptions, withApiErrors, type ConnectionArgs } from '../client/cli-config.js';
import { NoAnswer } from '../client/http.js';
import { InputError, UsageError } from '../errors.js';
import { parsePositiveSeconds } from '../service/cli-options.js';
import { parseId } from '../service/ids.js';
import { formatOf, writeOutputFile, writeStdout } from '../produce/output-path.js';
import { makeFolders } from '../folders.js';

type Args = ConnectionArgs & { action?: string; run: string; step?: number; output: string; timeout: number };

/**
 * Write an artifact: to stdout for -o -, else to the file (beside it first, then renamed: a file
 * that cannot be written in full is exit 2 and leaves nothing), its folder created when missing.
 */
function save(file: string, bytes: Buffer): Promise<void> {
  return file === '-' ? writeStdout(bytes) : writeOutputFile(file, bytes);
}

/** A folder: one that exists, or a path ending in a slash (made when missing). */
const isDir = (p: string) => {
  if (/[\\/]$/.test(p)) return true;
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** A run that has not finished (exit 2): the service stores its steps' telemetry only when it ends. */
function notFinished(e: RunNotFinished, runId: string): InputError {
  const telemetry = e.step === undefined ? 'its telemetry is' : `step ${e.step}'s telemetry is`;
  return new InputError(`run ${runId} is still ${e.run.status_humanized ?? e.run.status}: ${telemetry} stored when the run ends; fetch it then `
    + `(\`runlens jobs run JOB --wait\` follows a new run to its end; \`runlens jobs run-status ${runId}\` shows this one)`);
}

const knownAction = (v: string | undefined): string | undefined => {
  if (v !== undefined && v !== 'fetch') throw new UsageError(`unknown action ${v} (choose fetch)`);
  return v;
};

export const artifactsCommand: CommandBody<Args> = {
  builder: (y) =>
    connectionOptions(y)
      // checked as it is read: yargs checks choices after required options, and would ask for -o of an action that does not exist
      .positional('action', { choices: ['fetch'] as const, describe: "fetch: download the run's telemetry artifacts", coerce: knownAction })
      .option('run', { type: 'string', demandOption: true, describe: 'run id' })
      .option('step', { type: 'number', describe: 'step number; omitted: every step that has telemetry' })
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'file to write, or a folder (one that exists, or a path ending in /, made when missing; needed when several steps have telemetry); - writes to stdout' })
      .option('timeout', { type: 'number', default: 60, describe: 'seconds to wait for the service to answer, and then for each next part of the answer; give up (exit 2) after that' })
      .example('$0 artifacts fetch --run 7 -o run7.parquet', "the run's telemetry, found from its steps; then `runlens explore run7.parquet`"),
  handler: async (a) =>
    withApiErrors(async () => {
      try {
        await fetchArtifacts(a);
      } catch (e) {
        if (e instanceof NoAnswer) throw new InputError(`${e.message}; --timeout S waits longer`);
        throw e;
      }
    }),
};

async function fetchArtifacts(a: Args): Promise<void> {
  if (parseId(a.run) === null) throw new UsageError(`--run: expected a run id (1, 2, ... up to ${Number.MAX_SAFE_INTEGER}), got "${a.run}"`);
  // the artifacts are Parquet: a file whose extension says JSONL would hold what it does not say
  if (a.output !== '-' && !isDir(a.output) && formatOf(a.output) === 'jsonl')
    throw new UsageError(`-o ${a.output}: the telemetry artifacts are Parquet; name a .parquet file, a folder or - (runlens convert turns one into JSONL)`);
  const c = new ArtifactsClient({ ...clientConfig(a), answerTimeoutMs: parsePositiveSeconds('--timeout', a.timeout) });
  if (a.step !== undefined) {
    if (!Number.isInteger(a.step) || a.step < 1) throw new UsageError(`--step: expected a step number (1, 2, ...), got ${a.step}`);
    const bytes = await c.fetchStepTelemetry(a.run, a.step).catch((e: unknown) => {
      throw e instanceof RunNotFinished ? notFinished(e, a.run) : e;
    });
    const file = isDir(a.output) ? join(a.output, telemetryArtifactName(a.step)) : a.output;
    await save(file, bytes);
    if (file !== '-') process.stdout.write(`${file}\t${bytes.length} bytes (step ${a.step})\n`);
    return;
  }
  const { artifacts: all, notStored } = await c.fetchAllTelemetry(a.run).catch((e: unknown) => {
    throw e instanceof RunNotFinished ? notFinished(e, a.run) : e;
  });
  const why = (n: { step: number; reason: string }) => `the telemetry step ${n.step} wrote was not stored (${n.reason})`;
  const seeLogs = `\`runlens jobs run-status ${a.run} --logs\` shows the step's log`;
  if (!all.length && notStored.length) throw new InputError(`run ${a.run}: ${notStored.map(why).join('; ')}; ${seeLogs}`);
  if (!all.length) throw new InputError(`run ${a.run} has no step with telemetry (steps write it as a JSONL or Parquet file)`);
  for (const n of notStored) process.stderr.write(`runlens: run ${a.run}: ${why(n)}; ${seeLogs}\n`);
  if (all.length === 1 && !isDir(a.output)) {
    await save(a.output, all[0]!.bytes);
    if (a.output !== '-') process.stdout.write(`${a.output}\t${all[0]!.bytes.length} bytes (step ${all[0]!.step})\n`);
    return;
  }
  // a path that is not a folder names one file, which cannot hold several steps' telemetry
  if (!isDir(a.output)) {
    const what = a.output === '-' ? 'is stdout' : 'is a file';
    throw new UsageError(`run ${a.run} has ${all.length} steps with telemetry (${all.map((x) => x.step).join(', ')}): -o ${a.output} ${what}; `
      + 'give a folder (one that exists, or a path ending in /) or --step K');
  }
  makeFolders(a.output);
  for (const { step, bytes } of all) {
    const file = join(a.output, telemetryArtifactName(step));
    await save(file, bytes);
    process.stdout.write(`${file}\t${bytes.length} bytes (step ${step})\n`);
  }
}
