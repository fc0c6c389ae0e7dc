/**
 * A step outlives a `kill -9` of the serve that started it (it is a process group of its own, so that
 * a Ctrl-C in serve's terminal is serve's to handle). Its run is closed as errored when serve starts
 * again; the step, and what it started, must end then too, not go on working for a run that is over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/service/store/sqlite.js';
import { makeToken } from './helpers.js';
import { ServeProcesses } from './processes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(ok: () => boolean, what: string, ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Files named `name` in the run folders under `runs`. */
const filesNamed = (runs: string, name: string): string[] =>
  existsSync(runs) ? readdirSync(runs).map((d) => join(runs, d, name)).filter((f) => existsSync(f)) : [];

describe('a step left running by a kill -9 of serve', () => {
  it('is ended, with the process it started, when serve starts again on the same data; its run is errored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-orphan-'));
    const data = join(dir, 'data');
    const store = new SqliteStore(data);
    const procs = new ServeProcesses();
    const pids: number[] = [];
    cleanups.push(async () => {
      await procs.stopAll();
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const acct = await store.createAccount('orphans', Date.now() * 1000);
    const token = await makeToken(store, acct.id, 'developer');
    const args = ['--data', data, '--step-commands', 'node'];
    const serve = await procs.start(args);
    const api = async (path: string, body: unknown): Promise<any> => {
      const res = await fetch(`${serve.base}/api/v2/accounts/${acct.id}${path}`, {
        method: 'POST', headers: { authorization: `Token ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      const json = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    // the step starts a process of its own (a grandchild of serve), then both wait
    const script = [
      "const { spawn } = require('child_process'); const fs = require('fs');",
      "const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      "fs.writeFileSync('grandchild.pid', String(c.pid)); fs.writeFileSync('step.pid', String(process.pid));",
      'setInterval(() => {}, 1000);',
    ].join(' ');
    const job = await api('/jobs/', { name: 'waits', project_id: 1, environment_id: 1, execute_steps: [`node -e "${script}"`] });
    const run = await api(`/jobs/${job.id}/run/`, { cause: 'orphan test' });
    const runs = join(data, 'runs');
    await until(() => filesNamed(runs, 'step.pid').length === 1, 'the step to start', 20_000);
    const step = Number(readFileSync(filesNamed(runs, 'step.pid')[0]!, 'utf8'));
    const grandchild = Number(readFileSync(filesNamed(runs, 'grandchild.pid')[0]!, 'utf8'));
    pids.push(step, grandchild);
    expect(alive(step) && alive(grandchild)).toBe(true);

    await procs.kill(serve);
    // what a kill -9 leaves: serve cannot end its steps
    expect(alive(step) && alive(grandchild)).toBe(true);

    const again = await procs.start(args);
    await until(() => !alive(step) && !alive(grandchild), 'the step and its child to end', 15_000)
      .catch((e) => { throw new Error(`${(e as Error).message} (step ${alive(step) ? 'alive' : 'gone'}, its child ${alive(grandchild) ? 'alive' : 'gone'}); serve: ${again.stderr()}`); });
    const closed = await store.getRun(acct.id, Number(run.id));
    expect(closed?.finishedAt).not.toBeNull();
    expect(closed?.statusMessage).toBe('the service stopped while this run was in progress');
  }, 60_000);
});
