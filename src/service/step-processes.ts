/**
 * The step a run is carrying out, recorded beside the run's folder, so that the process that closes a
 * run its serve left (a kill -9, a crash) can end the step too: a step is a process group of its own
 * (src/service/runner.ts) and outlives serve. The record names the host and both processes with their
 * start times (Linux: /proc/PID/stat), so that a process id given to another process since is never
 * signalled, and a step whose serve still runs (slow, or cut off from a shared store) is left to it.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Run } from './store/types.js';

interface StepRecord {
  host: string;
  runId: number;
  runCreatedAt: number;
  serve: { pid: number; start: string };
  step: { pid: number; start: string };
}

/** How long a step has to end after SIGTERM before its group gets SIGKILL. */
const GRACE_MS = 5_000;

/** When a process started (clock ticks since boot), or undefined: no such process, or no /proc to tell. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after the command name, which is in parentheses and may hold spaces and parentheses
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const recordPath = (runDir: string) => `${runDir}.step`;

/** Records the step `pid` of `run`, running in `runDir`; false where the system cannot tell its start. */
export function recordStep(runDir: string, run: Run, pid: number): boolean {
  const stepStart = processStart(pid);
  const serveStart = processStart(process.pid);
  if (stepStart === undefined || serveStart === undefined) return false;
  const record: StepRecord = { host: hostname(), runId: run.id, runCreatedAt: run.createdAt,
    serve: { pid: process.pid, start: serveStart }, step: { pid, start: stepStart } };
  try {
    writeFileSync(recordPath(runDir), JSON.stringify(record));
    return true;
  } catch {
    return false; // (a full disk: the step runs all the same, unrecorded)
  }
}

export function forgetStep(runDir: string): void {
  rmSync(recordPath(runDir), { force: true });
}

/**
 * Ends the step of `run` that a serve process now gone left running under `workDir` (SIGTERM to its
 * group, SIGKILL after GRACE_MS); returns the process ids signalled.
 */
export function endOrphanedSteps(workDir: string, run: Run): number[] {
  let names: string[];
  try {
    names = readdirSync(workDir).filter((n) => n.startsWith(`${run.id}-`) && n.endsWith('.step'));
  } catch {
    return [];
  }
  const ended: number[] = [];
  for (const name of names) {
    const path = join(workDir, name);
    let r: StepRecord;
    try {
      r = JSON.parse(readFileSync(path, 'utf8')) as StepRecord;
    } catch {
      continue;
    }
    // another store's run of the same id (a folder shared by two stores), or another machine's processes
    if (r.runId !== run.id || r.runCreatedAt !== run.createdAt || r.host !== hostname()) continue;
    if (processStart(r.serve.pid) === r.serve.start) continue;
    if (processStart(r.step.pid) === r.step.start) {
      signalGroup(r.step.pid, 'SIGTERM');
      setTimeout(() => {
        if (processStart(r.step.pid) === r.step.start) signalGroup(r.step.pid, 'SIGKILL');
      }, GRACE_MS).unref();
      ended.push(r.step.pid);
    }
    rmSync(path, { force: true });
  }
  return ended;
}

function signalGroup(leader: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader, signal);
  } catch {
    /* ended meanwhile */
  }
}
