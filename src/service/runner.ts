/**
 * Job runs: steps execute in order as child processes (argv, no shell) in a per-run folder. Events go
 * into the outbox at the moments section 6A names: started when the run starts; errored as soon as a
 * step fails, before artifacts are stored; completed after every artifact is stored and served. Each
 * event commits with the run state it reports (a run and its started event are made together), so a
 * crash leaves every run with its started event, and the runs a stopped process held are closed as
 * errored (errored and completed) by the next process: at once on the embedded store, after their
 * lease ran out on a shared one. A run this process could not close (its store was down) is closed
 * again on each tick until that succeeds or another process has closed it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from './clock.js';
import { toMicros } from './clock.js';
import { splitCommand, stepEnvironment, stepRefusal } from './command-line.js';
import { eventId } from './ids.js';
import { buildPayload, RUN_STATUS } from './payload.js';
import { storableText } from './storable-text.js';
import type { TelemetryNote } from './telemetry-note.js';
import { endOrphanedSteps, forgetStep, recordStep } from './step-processes.js';
import { artifactName, findStepTelemetry, keepStepTelemetry, telemetryArtifact, telemetryBefore, type TelemetryFile } from './step-telemetry.js';
import type { EventType, Job, NewEvent, Run, RunLease, RunStep, Store } from './store/types.js';
import { cutText } from '../render/cut-text.js';
import { makeFolders } from '../folders.js';

const LOG_CAP = 64 * 1024;
/** the most a note of the runner's adds to a step's log */
const NOTE_CAP = 4 * 1024;

export interface RunnerOptions {
  store: Store;
  clock: Clock;
  stepCommands: readonly string[];
  /** folder under which each run gets its working folder */
  workDir: string;
  /** called after events were committed, so the dispatcher looks at once */
  onEvents: () => void;
  /** how long a run stays held without renewal; on a shared store, others then close it as abandoned */
  leaseMs: number;
}

export class JobRunner {
  readonly owner = randomUUID();
  private readonly running = new Set<Promise<void>>();
  /** ids of the runs this process is carrying out: the only runs whose lease it renews */
  private readonly executing = new Set<number>();
  /** runs this process failed to carry out and then failed to close: closed again on each tick */
  private readonly unclosed = new Map<number, { job: Job; message: string }>();
  private timer: NodeJS.Timeout | undefined;
  /** the tick in flight, if any */
  private ticking: Promise<void> | undefined;
  constructor(private readonly o: RunnerOptions) {}

  /**
   * Creates the run, already Running, together with its job.run.started event, then executes it; the
   * returned run is what POST .../run/ answers.
   */
  async trigger(job: Job, cause: string): Promise<Run> {
    const now = toMicros(this.o.clock.now());
    const run = await this.o.store.createRun(
      { accountId: job.accountId, jobId: job.id, status: RUN_STATUS.running, statusMessage: null, cause, createdAt: now, startedAt: now,
        finishedAt: null, erroredAt: null },
      this.lease(),
      (r) => [this.event('job.run.started', job, r)],
    );
    this.o.onEvents();
    this.executing.add(run.id);
    const p = this.execute(job, { ...run }).catch((e) => this.closeFailedRun(job, run.id, e as Error));
    this.running.add(p);
    void p.finally(() => {
      this.running.delete(p);
      this.executing.delete(run.id);
    });
    return run;
  }

  /** runs this process is carrying out now */
  get inProgress(): number {
    return this.running.size;
  }

  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /**
   * Every third of the lease: closes again the runs this process failed to close; on a shared store
   * also renews its hold on the runs it is carrying out and closes those of processes that stopped or
   * lost them. (The embedded store closes abandoned runs once, at start-up.)
   */
  start(): void {
    clearInterval(this.timer);
    const tick = async () => {
      try {
        await this.closeUnclosedRuns();
        if (!this.o.store.exclusive) {
          await this.o.store.renewRunLeases(this.owner, [...this.executing], this.lease().until);
          await this.closeAbandonedRuns(false);
        }
      } catch (e) {
        if (this.timer) process.emitWarning(`runlens runner: ${(e as Error).message}`);
      } finally {
        this.ticking = undefined;
      }
    };
    this.timer = setInterval(() => {
      this.ticking ??= tick();
    }, Math.max(50, this.o.leaseMs / 3));
    this.timer.unref?.();
  }

  /**
   * No more ticks; resolves once a tick in flight is over, so that its writes (a lease renewal holds
   * the runs' rows) are done before the store is closed or another process takes the runs.
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  private lease(): RunLease {
    return { owner: this.owner, until: toMicros(this.o.clock.now() + this.o.leaseMs) };
  }

  /**
   * A run whose process stopped cannot finish: it is closed as errored (errored, unless it was sent
   * already, then completed), so subscribers are not left waiting for a completion that never comes.
   * `all`: every unfinished run (the embedded store at start-up); otherwise those whose lease ran out.
   */
  async closeAbandonedRuns(all: boolean): Promise<number> {
    const runs = await this.o.store.claimAbandonedRuns(all ? null : toMicros(this.o.clock.now()), this.lease());
    for (const run of runs) {
      // its own run, taken back from a process that took it while this one was slow: it goes on here
      if (this.executing.has(run.id)) continue;
      // a step its serve left running (a kill -9) ends with the run
      const ended = endOrphanedSteps(this.o.workDir, run);
      if (ended.length) process.emitWarning(`runlens runner: run ${run.id}: ended the step its process left running (process group ${ended.join(', ')})`);
      const job = await this.o.store.getJob(run.accountId, run.jobId);
      // on a shared store the holder may still be alive (slow, or cut off from the database)
      const message = all ? 'the service stopped while this run was in progress'
        : 'the process carrying out this run stopped or lost it (its lease ran out)';
      if (job) await this.closeAsErrored(job, run, message);
    }
    return runs.length;
  }

  /** Closes again the runs a failed close left open; one another process closed meanwhile is left as it is. */
  private async closeUnclosedRuns(): Promise<void> {
    for (const [runId, { job, message }] of [...this.unclosed]) {
      try {
        const run = await this.o.store.getRun(job.accountId, runId);
        if (run && run.finishedAt === null) await this.closeAsErrored(job, run, message);
        this.unclosed.delete(runId);
      } catch (e) {
        process.emitWarning(`runlens run ${runId}: closing it failed again: ${(e as Error).message}`);
      }
    }
  }

  /**
   * Closes a run that cannot finish, and the steps it left running, as errored (errored, unless sent
   * already, then completed). Telemetry its steps wrote that was not stored yet is said not stored, why.
   */
  private async closeAsErrored(job: Job, run: Run, message: string): Promise<void> {
    const now = toMicros(this.o.clock.now());
    for (const step of await this.o.store.listRunSteps(run.id)) {
      const running = step.status === RUN_STATUS.running;
      if (!running && !step.telemetryNotes.some((n) => n.reason === null)) continue;
      // refused when this process no longer holds the run: updateRun below is then refused too
      await this.o.store.saveRunStep({ ...step, telemetryNotes: step.telemetryNotes.map((n) => ({ ...n, reason: n.reason ?? noteText(message) })),
        ...(running ? { status: RUN_STATUS.error, finishedAt: now } : {}) }, this.owner);
    }
    const types: EventType[] = ['job.run.completed'];
    if (run.status !== RUN_STATUS.error) {
      Object.assign(run, { status: RUN_STATUS.error, statusMessage: message, erroredAt: now });
      types.unshift('job.run.errored');
    }
    run.startedAt ??= now;
    run.finishedAt = now;
    await this.update(job, run, types);
  }

  /**
   * A run the service itself failed to carry out (its store refused a write, a step could not be
   * spawned) is closed as errored, with the steps left running, so that subscribers and waiting
   * clients are not left waiting for its end; if even that fails it is closed again on each tick
   * (and, no longer renewed, by another process once its lease ran out).
   */
  private async closeFailedRun(job: Job, runId: number, e: Error): Promise<void> {
    const message = `the service failed to carry out this run: ${e.message}`;
    try {
      const run = await this.o.store.getRun(job.accountId, runId);
      if (run && run.finishedAt === null) await this.closeAsErrored(job, run, message);
    } catch (again) {
      this.unclosed.set(runId, { job, message });
      process.emitWarning(`runlens run ${runId}: ${e.message}; closing it failed too: ${(again as Error).message}`);
    }
  }

  /** One event of a run, built with the run as it is now (payloads are made inside the store's transaction). */
  private event(type: EventType, job: Job, run: Run): NewEvent {
    const now = this.o.clock.now();
    const snapshot = { ...run };
    return {
      accountId: job.accountId, jobId: job.id, eventType: type, now: toMicros(now),
      newEventId: () => eventId(now),
      payloadFor: (sub, id) => buildPayload(sub, id, type, job, snapshot, now),
    };
  }

  /** Writes the run's state with its events; false when another process has closed the run meanwhile. */
  private async update(job: Job, run: Run, types: EventType[]): Promise<boolean> {
    const held = await this.o.store.updateRun({ ...run }, this.owner, types.map((t) => this.event(t, job, run)));
    if (held && types.length) this.o.onEvents();
    return held;
  }

  private async execute(job: Job, run: Run): Promise<void> {
    // A folder of its own, new and empty (`<id>-<random>`): a folder left by a run of the same id
    // (another store that shared --data, a reset database) must not lend this run its files.
    makeFolders(this.o.workDir);
    const runDir = await mkdtemp(join(this.o.workDir, `${run.id}-`));

    const steps: RunStep[] = [];
    const telemetry = new Map<number, KeptTelemetry>();
    let failed: RunStep | null = null;
    let failedSignal: NodeJS.Signals | null = null;
    for (const [i, command] of job.executeSteps.entries()) {
      const step: RunStep = { runId: run.id, index: i + 1, name: command, status: RUN_STATUS.running, exitCode: null, logs: '',
        startedAt: toMicros(this.o.clock.now()), finishedAt: null, artifact: null, telemetryNotes: [] };
      steps.push(step);
      // Every write below is refused once another process closed the run (this one's lease ran out while
      // it was paused or slow): the run is left as that process closed it, and no further step starts.
      if (!(await this.o.store.saveRunStep(step, this.owner))) return this.lost(run);
      const argv = safeSplit(command);
      const before = await telemetryBefore(argv, runDir);
      const telemetryDir = join(runDir, `step-${step.index}-telemetry`);
      // made before the step starts: `cp FILE "$RUNLENS_TELEMETRY_DIR"` would otherwise make a file of that name
      await mkdir(telemetryDir);
      const result = await this.runStep(command, runDir, telemetryDir, run, step.index);
      Object.assign(step, { exitCode: result.exitCode, logs: result.logs, finishedAt: toMicros(this.o.clock.now()),
        status: result.exitCode === 0 ? RUN_STATUS.success : RUN_STATUS.error });
      const files = await findStepTelemetry(argv, runDir, telemetryDir, before).finally(() => before.release());
      // kept now: a later step may write the same file again or delete it; the step says so until it is stored
      const kept = files.length ? await keep(files, runDir, step.index) : null;
      if (kept) telemetry.set(step.index, kept);
      step.telemetryNotes = (kept?.kept ?? []).map((k) => ({ file: noteText(k.file.path), reason: null }));
      if (!(await this.o.store.saveRunStep(step, this.owner))) return this.lost(run);
      if (result.exitCode !== 0) {
        failed = step;
        failedSignal = result.signal;
        break;
      }
    }

    if (failed) {
      run.status = RUN_STATUS.error;
      const how = failed.exitCode === null ? 'did not start' : failedSignal ? `killed by ${failedSignal}` : `exited with ${failed.exitCode}`;
      run.statusMessage = `step ${failed.index} (${failed.name}) ${how}`;
      run.erroredAt = toMicros(this.o.clock.now());
      if (!(await this.update(job, run, ['job.run.errored']))) return this.lost(run);
    }

    for (const step of steps) {
      const t = telemetry.get(step.index);
      if (!t) continue;
      const refused: { file: TelemetryFile; error: Error; copy?: string }[] = [...t.failed];
      try {
        const stored = t.kept.length ? await telemetryArtifact(t.kept.map((k) => k.copy), t.dir, step.index) : { bytes: null, refused: [] };
        for (const r of stored.refused) refused.push({ file: t.kept.find((k) => k.copy === r.file)!.file, error: r.error, copy: r.file.path });
        if (stored.bytes) {
          if (!(await this.o.store.putArtifact(run.id, step.index, artifactName(step.index), stored.bytes, toMicros(this.o.clock.now()), this.owner))) return this.lost(run);
          step.artifact = artifactName(step.index);
        }
      } catch (e) {
        for (const k of t.kept) refused.push({ file: k.file, error: e as Error, copy: k.copy.path });
      }
      step.telemetryNotes = refused.map((r): TelemetryNote => ({ file: noteText(r.file.path), reason: noteText(notStoredReason(r)) }));
      if (!(await this.o.store.saveRunStep(step, this.owner))) return this.lost(run);
    }

    run.finishedAt = toMicros(this.o.clock.now());
    if (!failed) run.status = RUN_STATUS.success;
    if (!(await this.update(job, run, ['job.run.completed']))) this.lost(run);
  }

  /** A write of this run's was refused: another process closed it meanwhile. Its operator is told once. */
  private lost(run: Run): void {
    process.emitWarning(`runlens runner: run ${run.id} was closed by another process while this one carried it out (this process's lease on it ran out: it was paused, slow or cut off from the database); what this process had for it is not stored`);
  }

  /** the steps running now, each the leader of a process group of its own */
  private readonly steps = new Set<ChildProcess>();

  /** Sends `signal` to the process group of every running step, so what a step started ends with it. */
  stopSteps(signal: NodeJS.Signals): void {
    for (const child of this.steps) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* the step ended meanwhile */
      }
    }
  }

  private runStep(command: string, cwd: string, telemetryDir: string, run: Run, index: number): Promise<StepResult> {
    const refusal = stepRefusal(command, this.o.stepCommands);
    if (refusal) return Promise.resolve({ exitCode: null, signal: null, logs: `[runlens] step refused: ${refusal}\n` });
    const [exe, ...args] = splitCommand(command) as [string, ...string[]];
    const [file, prefix] = resolveExecutable(exe);
    return new Promise((resolvePromise) => {
      let logs = '';
      const append = (text: string) => {
        // up to the cap, then once more so that capLog marks the cut (a read can end exactly at the cap)
        if (logs.length <= LOG_CAP) logs = capLog(logs + text);
      };
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(file, [...prefix, ...args], {
          cwd,
          shell: false,
          // A group of its own: a Ctrl-C in serve's terminal (a signal to serve's group) is serve's to
          // handle, and serve lets the runs in progress finish. Not unref'd: serve waits for the step.
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: stepEnvironment(process.env, { RUNLENS_TELEMETRY_DIR: telemetryDir, RUNLENS_RUN_ID: String(run.id), RUNLENS_STEP: String(index) },
            this.o.stepCommands),
        });
      } catch (e) {
        // arguments the system refuses are thrown at once, not emitted as 'error'
        resolvePromise({ exitCode: null, signal: null, logs: `[runlens] could not start ${exe}: ${(e as Error).message}\n` });
        return;
      }
      this.steps.add(child);
      if (child.pid !== undefined) recordStep(cwd, run, child.pid);
      // decoded by each stream, which keeps a character's first bytes until the read that ends it
      for (const out of [child.stdout!, child.stderr!]) out.setEncoding('utf8').on('data', append);
      child.on('error', (e) => {
        this.steps.delete(child);
        forgetStep(cwd);
        resolvePromise({ exitCode: null, signal: null, logs: `${logs}[runlens] could not start ${exe}: ${e.message}\n` });
      });
      child.on('close', (code, signal) => {
        this.steps.delete(child);
        forgetStep(cwd);
        if (code !== null || !signal) return resolvePromise({ exitCode: code ?? 1, signal: null, logs });
        // 128 + the signal's number, the exit status shells report for a process a signal ended
        resolvePromise({ exitCode: 128 + (constants.signals[signal] ?? 0), signal, logs: withNote(logs, `[runlens] step killed by ${signal}\n`) });
      });
    });
  }
}

/**
 * A step's telemetry files and the runner's copies of them (or why a file has none), in a folder of
 * their own.
 */
interface KeptTelemetry {
  dir: string;
  kept: { file: TelemetryFile; copy: TelemetryFile }[];
  failed: { file: TelemetryFile; error: Error }[];
}

/** Copies a finished step's telemetry into a new folder of the run's that no step is told of. */
async function keep(files: TelemetryFile[], runDir: string, index: number): Promise<KeptTelemetry> {
  const t: KeptTelemetry = { dir: '', kept: [], failed: [] };
  try {
    t.dir = await mkdtemp(join(runDir, `.step-${index}-kept-`));
  } catch (e) {
    t.failed = files.map((file) => ({ file, error: e as Error }));
    return t;
  }
  for (const file of files) {
    try {
      t.kept.push({ file, copy: await keepStepTelemetry(file, t.dir) });
    } catch (e) {
      t.failed.push({ file, error: e as Error });
    }
  }
  return t;
}

/** Why a step's telemetry file was not stored, naming the file the step wrote rather than the runner's copy. */
function notStoredReason(r: { file: TelemetryFile; error: Error; copy?: string }): string {
  const reason = r.copy ? r.error.message.split(r.copy).join(r.file.path) : r.error.message;
  return r.file.appendedFrom ? `${reason} (in the part this step appended, from byte ${r.file.appendedFrom})` : reason;
}

interface StepResult {
  /** null when the step did not start */
  exitCode: number | null;
  /** the signal that ended the step, if one did */
  signal: NodeJS.Signals | null;
  logs: string;
}

function safeSplit(command: string): string[] {
  try {
    return splitCommand(command);
  } catch {
    return [];
  }
}

/** A step's log as stored: NUL kept as U+FFFD (see storable-text.ts), at most LOG_CAP characters. */
const capLog = (s: string): string => {
  const text = storableText(s);
  return text.length > LOG_CAP ? cutText(text, LOG_CAP) + '\n[runlens] log truncated\n' : text;
};

/** The runner's own line after a step's (capped) log: kept whole however much the step printed. */
const withNote = (logs: string, note: string): string => logs + noteText(note);

/** Text of a note of the runner's, as stored. */
const noteText = (text: string): string => cutText(storableText(text), NOTE_CAP);

/** `runlens` steps run this very CLI with this Node, so they work without a global install. */
function resolveExecutable(exe: string): [string, string[]] {
  if (exe === 'runlens') {
    const cli = fileURLToPath(new URL('../cli.js', import.meta.url));
    if (existsSync(cli)) return [process.execPath, [cli]];
  }
  if (exe === 'node') return [process.execPath, []];
  return [exe, []];
}
