/**
 * Job runs: steps execute in order as child processes (argv, no shell) in a per-run folder. Events go
 * into the outbox at the moments section 6A names: started when the run starts; errored as soon as a
 * step fails, before artifacts are stored; completed after every artifact is stored and served.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from './clock.js';
import { toMicros } from './clock.js';
import { splitCommand, stepRefusal } from './command-line.js';
import { eventId } from './ids.js';
import { buildPayload, RUN_STATUS } from './payload.js';
import { artifactName, findStepTelemetry, telemetryArtifact } from './step-telemetry.js';
import type { EventType, Job, Run, RunStep, Store } from './store/types.js';

const LOG_CAP = 64 * 1024;

export interface RunnerOptions {
  store: Store;
  clock: Clock;
  stepCommands: readonly string[];
  /** folder under which each run gets its working folder */
  workDir: string;
  /** called after events were committed, so the dispatcher looks at once */
  onEvents: () => void;
}

export class JobRunner {
  private readonly running = new Set<Promise<void>>();
  constructor(private readonly o: RunnerOptions) {}

  /** Creates the run (Queued) and starts it; the returned run is what POST .../run/ answers. */
  async trigger(job: Job, cause: string): Promise<Run> {
    const run = await this.o.store.createRun({
      accountId: job.accountId, jobId: job.id, status: RUN_STATUS.queued, statusMessage: null, cause,
      createdAt: toMicros(this.o.clock.now()), startedAt: null, finishedAt: null, erroredAt: null,
    });
    const p = this.execute(job, { ...run }).catch((e) => process.emitWarning(`runlens run ${run.id}: ${(e as Error).message}`));
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
    return run;
  }

  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /**
   * Runs a process that stopped left Queued or Running cannot finish: they are closed as errored
   * (with both events), so subscribers are not left waiting for a completion that never comes.
   */
  async closeAbandonedRuns(): Promise<number> {
    const runs = await this.o.store.listUnfinishedRuns();
    for (const run of runs) {
      const job = await this.o.store.getJob(run.accountId, run.jobId);
      if (!job) continue;
      const now = toMicros(this.o.clock.now());
      Object.assign(run, { status: RUN_STATUS.error, statusMessage: 'the service stopped while this run was in progress', erroredAt: now, finishedAt: now });
      run.startedAt ??= now;
      await this.o.store.saveRun(run);
      await this.emit('job.run.errored', job, run);
      await this.emit('job.run.completed', job, run);
    }
    return runs.length;
  }

  private async emit(type: EventType, job: Job, run: Run): Promise<void> {
    const now = this.o.clock.now();
    const events = await this.o.store.enqueueEvent({
      accountId: job.accountId, jobId: job.id, eventType: type, now: toMicros(now),
      newEventId: () => eventId(now),
      payloadFor: (sub, id) => buildPayload(sub, id, type, job, run, now),
    });
    if (events.length) this.o.onEvents();
  }

  private async execute(job: Job, run: Run): Promise<void> {
    const runDir = join(this.o.workDir, String(run.id));
    await mkdir(runDir, { recursive: true });
    run.status = RUN_STATUS.running;
    run.startedAt = toMicros(this.o.clock.now());
    await this.o.store.saveRun(run);
    await this.emit('job.run.started', job, run);

    const steps: RunStep[] = [];
    const telemetry = new Map<number, Awaited<ReturnType<typeof findStepTelemetry>>>();
    let failed: RunStep | null = null;
    for (const [i, command] of job.executeSteps.entries()) {
      const step: RunStep = { runId: run.id, index: i + 1, name: command, status: RUN_STATUS.running, exitCode: null, logs: '',
        startedAt: toMicros(this.o.clock.now()), finishedAt: null, artifact: null };
      steps.push(step);
      await this.o.store.saveRunStep(step);
      const startedMs = Date.now();
      const telemetryDir = join(runDir, `step-${step.index}-telemetry`);
      const result = await this.runStep(command, runDir, telemetryDir, run, step.index);
      Object.assign(step, { exitCode: result.exitCode, logs: result.logs, finishedAt: toMicros(this.o.clock.now()),
        status: result.exitCode === 0 ? RUN_STATUS.success : RUN_STATUS.error });
      await this.o.store.saveRunStep(step);
      const argv = safeSplit(command);
      telemetry.set(step.index, await findStepTelemetry(argv, runDir, telemetryDir, startedMs));
      if (result.exitCode !== 0) {
        failed = step;
        break;
      }
    }

    if (failed) {
      run.status = RUN_STATUS.error;
      run.statusMessage = `step ${failed.index} (${failed.name}) ${failed.exitCode === null ? 'did not start' : `exited with ${failed.exitCode}`}`;
      run.erroredAt = toMicros(this.o.clock.now());
      await this.o.store.saveRun(run);
      await this.emit('job.run.errored', job, run);
    }

    for (const step of steps) {
      const file = telemetry.get(step.index);
      if (!file) continue;
      try {
        const bytes = await telemetryArtifact(file, runDir, step.index);
        await this.o.store.putArtifact(run.id, step.index, artifactName(step.index), bytes, toMicros(this.o.clock.now()));
        step.artifact = artifactName(step.index);
      } catch (e) {
        step.logs = capLog(`${step.logs}\n[runlens] telemetry ${file.path} not stored: ${(e as Error).message}\n`);
      }
      await this.o.store.saveRunStep(step);
    }

    run.finishedAt = toMicros(this.o.clock.now());
    if (!failed) run.status = RUN_STATUS.success;
    await this.o.store.saveRun(run);
    await this.emit('job.run.completed', job, run);
  }

  private runStep(command: string, cwd: string, telemetryDir: string, run: Run, index: number): Promise<{ exitCode: number | null; logs: string }> {
    const refusal = stepRefusal(command, this.o.stepCommands);
    if (refusal) return Promise.resolve({ exitCode: null, logs: `[runlens] step refused: ${refusal}\n` });
    const [exe, ...args] = splitCommand(command) as [string, ...string[]];
    const [file, prefix] = resolveExecutable(exe);
    return new Promise((resolvePromise) => {
      let logs = '';
      const append = (b: Buffer) => {
        if (logs.length < LOG_CAP) logs = capLog(logs + b.toString('utf8'));
      };
      const child = spawn(file, [...prefix, ...args], {
        cwd,
        shell: false,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, RUNLENS_TELEMETRY_DIR: telemetryDir, RUNLENS_RUN_ID: String(run.id), RUNLENS_STEP: String(index) },
      });
      child.stdout.on('data', append);
      child.stderr.on('data', append);
      child.on('error', (e) => resolvePromise({ exitCode: null, logs: `${logs}[runlens] could not start ${exe}: ${e.message}\n` }));
      child.on('close', (code, signal) => resolvePromise({ exitCode: code ?? (signal ? 128 : 1), logs }));
    });
  }
}

function safeSplit(command: string): string[] {
  try {
    return splitCommand(command);
  } catch {
    return [];
  }
}

const capLog = (s: string): string => (s.length > LOG_CAP ? s.slice(0, LOG_CAP) + '\n[runlens] log truncated\n' : s);

/** `runlens` steps run this very CLI with this Node, so they work without a global install. */
function resolveExecutable(exe: string): [string, string[]] {
  if (exe === 'runlens') {
    const cli = fileURLToPath(new URL('../cli.js', import.meta.url));
    if (existsSync(cli)) return [process.execPath, [cli]];
  }
  if (exe === 'node') return [process.execPath, []];
  return [exe, []];
}
