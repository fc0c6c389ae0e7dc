/**
 * Which recorded steps a closing process ends: only those whose serve is gone, of the same run (id and
 * creation time) on this machine, and still the process that was recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endOrphanedSteps, forgetStep, processStart, recordStep } from '../../src/service/step-processes.js';
import type { Run } from '../../src/service/store/types.js';

const run: Run = { id: 7, accountId: 1, jobId: 1, status: 3, statusMessage: null, cause: 'test', createdAt: 1_700_000_000_000_000,
  startedAt: null, finishedAt: null, erroredAt: null };

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function waitingStep(): ChildProcess {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  children.push(c);
  return c;
}

function runDir(): { workDir: string; dir: string } {
  const workDir = mkdtempSync(join(tmpdir(), 'runlens-steps-'));
  dirs.push(workDir);
  const dir = join(workDir, `${run.id}-abc123`);
  mkdirSync(dir);
  return { workDir, dir };
}

const exited = (c: ChildProcess) => new Promise<NodeJS.Signals | null>((r) => (c.exitCode !== null || c.signalCode !== null ? r(c.signalCode) : c.once('exit', (_, s) => r(s))));

/** The record of `dir` with `change` made to it, as a serve process now gone would have left it. */
function edit(dir: string, change: (r: any) => void): void {
  const r = JSON.parse(readFileSync(`${dir}.step`, 'utf8'));
  change(r);
  writeFileSync(`${dir}.step`, JSON.stringify(r));
}

describe('steps recorded beside their run folders', () => {
  it('tells a process start time, and none for a process that does not exist', () => {
    expect(processStart(process.pid)).toMatch(/^\d+$/);
    expect(processStart(2 ** 22 + 1)).toBeUndefined();
  });

  it('leaves the step of a serve that still runs', () => {
    const { workDir, dir } = runDir();
    const step = waitingStep();
    expect(recordStep(dir, run, step.pid!)).toBe(true);
    expect(endOrphanedSteps(workDir, run)).toEqual([]);
    expect(processStart(step.pid!)).toBeDefined();
  });

  it('ends the step of a serve now gone, and forgets it', async () => {
    const { workDir, dir } = runDir();
    const step = waitingStep();
    recordStep(dir, run, step.pid!);
    edit(dir, (r) => { r.serve.start = 'gone'; });
    expect(endOrphanedSteps(workDir, run)).toEqual([step.pid]);
    expect(await exited(step)).toBe('SIGTERM');
    expect(existsSync(`${dir}.step`)).toBe(false);
  });

  it('leaves a process that is not the recorded one, another run of the same id, and another machine\'s', () => {
    for (const change of [(r: any) => { r.step.start = '1'; }, (r: any) => { r.runCreatedAt += 1; }, (r: any) => { r.host = 'elsewhere'; }]) {
      const { workDir, dir } = runDir();
      const step = waitingStep();
      recordStep(dir, run, step.pid!);
      edit(dir, (r) => { r.serve.start = 'gone'; change(r); });
      expect(endOrphanedSteps(workDir, run)).toEqual([]);
      expect(processStart(step.pid!)).toBeDefined();
    }
  });

  it('forgets a step that ended', () => {
    const { dir } = runDir();
    const step = waitingStep();
    recordStep(dir, run, step.pid!);
    expect(existsSync(`${dir}.step`)).toBe(true);
    forgetStep(dir);
    expect(existsSync(`${dir}.step`)).toBe(false);
  });
});
