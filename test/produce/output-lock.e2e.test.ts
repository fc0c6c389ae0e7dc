/**
 * An output file has one writer: a runlens process writing it holds OUT.lock (its pid), and another
 * runlens process asked to write the same file is refused (exit 2, naming the holder) instead of
 * both saying they wrote it while one's records are lost. A lock whose process is gone is taken over.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, runCli, startCli, until } from '../helpers/cli.js';
import { LEGACY, ROOT, samplesNote } from '../helpers/samples.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(tmp.cleanup);
const note = samplesNote(LEGACY);
const LOG1 = path.join(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
const LOG2 = path.join(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl');

/** A second writer of the same output: must end at once (refused); a hang would be the defect. */
function runSecond(args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CI: 'true', NO_COLOR: '1' }, timeout: 20_000, killSignal: 'SIGTERM' });
  return { code: r.status, stderr: r.stderr };
}

/** A pid no process has: one that has just exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

const invocations = (file: string) => JSON.parse(runCli(['runs', file, '--format', 'json']).stdout) as unknown[];

describe.skipIf(note.missing)(note.title('one writer per output file'), () => {
  it('record: a second record to the output being recorded is refused before its command starts, and the first run is all there', async () => {
    const dir = path.join(tmp.dir, 'record');
    const out = path.join(dir, 'out.jsonl');
    const go = path.join(dir, 'go');
    const first = startCli(['record', '-o', out, '--', 'sh', '-c', `cat '${LOG1}'; while [ ! -e '${go}' ]; do sleep 0.05; done`]);
    await until(() => existsSync(out), first);
    const ran = path.join(dir, 'ran');
    const second = runSecond(['record', '-o', out, '--', 'sh', '-c', `touch '${ran}'; cat '${LOG2}'`]);
    writeFileSync(go, '');
    const r = await first.done;
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`being written by another runlens process (pid ${first.pid})`);
    expect(second.stderr).toContain('out.jsonl');
    expect(existsSync(ran), 'the refused record ran its command').toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(runCli(['validate', out]).code).toBe(0);
    expect(invocations(out)).toHaveLength(1);
    expect(readdirSync(dir).sort()).toEqual(['go', 'out.jsonl']);
  });

  it('receive: a second receive --jsonl to the file another receive writes is refused before it listens', async () => {
    const dir = path.join(tmp.dir, 'receive');
    const shared = path.join(dir, 'shared.jsonl');
    const first = startCli(['receive', '--port', '0', '--jsonl', shared]);
    await until(() => /http:\/\/127\.0\.0\.1:\d+/.test(first.stderr()), first);
    const second = runSecond(['receive', '--port', '0', '--jsonl', shared]);
    first.kill('SIGTERM');
    const r = await first.done;
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain(`(pid ${first.pid})`);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual(['shared.jsonl']);
  }, 60_000);

  it('generate, migrate, convert and receive --parquet refuse an output a live process holds, and leave it as it was', () => {
    const dir = path.join(tmp.dir, 'held');
    runCli(['generate', '-o', path.join(dir, 'in.jsonl'), '--nodes', '8']);
    const holder = process.pid; // this test's own process: alive
    const cases: [string, string[]][] = [
      ['g.jsonl', ['generate', '--nodes', '8']],
      ['g.parquet', ['generate', '--nodes', '8']],
      ['m.jsonl', ['migrate', LOG1]],
      ['m.parquet', ['migrate', LOG1]],
      ['c.parquet', ['convert', path.join(dir, 'in.jsonl')]],
    ];
    for (const [name, args] of cases) {
      const out = path.join(dir, name);
      writeFileSync(out, 'kept');
      writeFileSync(`${out}.lock`, String(holder));
      const r = args[0] === 'convert' ? runCli([...args, out]) : runCli([...args, '-o', out]);
      expect(r.code, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${name} is being written by another runlens process (pid ${holder})`);
      expect(readFileSync(out, 'utf8')).toBe('kept');
      expect(readFileSync(`${out}.lock`, 'utf8')).toBe(String(holder));
    }
    const pq = path.join(dir, 'r.parquet');
    writeFileSync(`${pq}.lock`, String(holder));
    const r = runSecond(['receive', '--port', '0', '--parquet', pq]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`(pid ${holder})`);
  });

  it('a lock left by a process that is gone is taken over, and removed at the end', () => {
    const dir = path.join(tmp.dir, 'stale');
    mkdirSync(dir);
    for (const [name, args] of [['g.jsonl', ['generate', '--nodes', '8']], ['m.parquet', ['migrate', LOG2]]] as const) {
      const out = path.join(dir, name);
      writeFileSync(`${out}.lock`, String(deadPid()));
      const r = runCli([...args, '-o', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(`${out}.lock`)).toBe(false);
      expect(runCli(['validate', out]).code).toBe(0);
    }
  });
});
