/** `runlens record` end to end through the built CLI, with small replay scripts instead of the engine. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineArgv } from '../../src/legacy/record.js';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';
import { expectValid } from './helpers.js';
import { OtlpReceiver } from '../../src/ingest/otlp-receiver.js';
import { openModel } from '../../src/store/load.js';

const note = samplesNote(LEGACY);
const INV = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const line = (name: string, data: object, level = 'debug', msg = name) =>
  JSON.stringify({ data, info: { category: '', code: 'X', extra: {}, invocation_id: INV, level, msg, name, pid: 1, thread: 'MainThread', ts: new Date().toISOString() } });
const LOGS = ['log_1.10.15_duckdb_singular_tests.jsonl', 'log_1.11.0_bigquery_run_excerpt.jsonl', 'log_1.8.2_postgres_build_mixed.jsonl', 'log_1.8.2_postgres_run_model_error.jsonl', 'log_1.8.2_postgres_test_pass_fail.jsonl'];
const recordedCount = (stderr: string) => Number(/recorded .*?, (\d+) records? to/.exec(stderr)?.[1] ?? NaN);

/** The built CLI without blocking this process (an in-process receiver must answer meanwhile). */
function cliAsync(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CI: 'true', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((res) => child.on('close', (code) => res({ code, stderr })));
}

const node = { unique_id: 'model.p.slow', resource_type: 'model', node_name: 'slow', node_path: 'slow.sql', materialized: 'table', node_status: 'started' };

describe('record', () => {
  it('adds --log-format json for the engine only', () => {
    expect(engineArgv(['dbt', 'build'])).toEqual(['dbt', 'build', '--log-format', 'json']);
    expect(engineArgv(['/usr/bin/dbt', 'run', '--log-format=text'])).toEqual(['/usr/bin/dbt', 'run', '--log-format=text']);
    expect(engineArgv(['cat', 'x.jsonl'])).toEqual(['cat', 'x.jsonl']);
  });

  it.skipIf(note.missing)(note.title('an output it cannot write in full is exit 2 naming it, never "recorded ... to FILE"'), () => {
    const dir = tempDir('runlens-record-full-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    for (const name of ['cut.jsonl', 'cut.parquet']) {
      const out = path.join(dir, name);
      // files of at most 8 blocks: a write past that fails (EFBIG), as on a full disk
      const r = spawnSync('sh', ['-c', `ulimit -f 8; exec "${process.execPath}" "${CLI}" record -o "${out}" -- cat "${log}"`], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
      expect(r.status, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, name).toMatch(new RegExp(`runlens: ${out.replace(/[.]/g, '\\.')}: not written in full \\(.*\\); the command exited 0`));
      expect(r.stderr, name).not.toMatch(/runlens: recorded/);
    }
  });

  it.skipIf(note.missing)(note.title('replays a real log with cat: JSONL validates, human text on stderr, exit code kept'), async () => {
    const dir = tempDir('runlens-record-');
    const out = path.join(dir, 'run.jsonl');
    const r = runCli(['record', '-o', out, '--', 'cat', sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Done. PASS=3 WARN=0 ERROR=1 SKIP=0 TOTAL=4');
    expect(r.stderr).toMatch(/recorded 1 invocation, 4 nodes/);
    await expectValid(out);
    const pq = path.join(dir, 'run.parquet');
    const r2 = runCli(['record', '-o', pq, '--', 'sh', '-c', `cat '${sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl')}'; exit 3`]);
    expect(r2.code).toBe(3);
    expect(existsSync(pq)).toBe(true);
    await expectValid(pq);
  });

  it.skipIf(note.missing)(note.title('Parquet: a command that exits at once (cat) loses nothing of what it printed'), async () => {
    const dir = tempDir('runlens-record-pq-');
    for (const name of LOGS) {
      const log = sample(LEGACY, name);
      const j = runCli(['record', '-o', path.join(dir, 'run.jsonl'), '--', 'cat', log]);
      const pq = path.join(dir, 'run.parquet');
      const p = runCli(['record', '-o', pq, '--', 'cat', log]);
      expect(p.code, name + p.stderr).toBe(0);
      expect(recordedCount(j.stderr), name).toBeGreaterThan(0);
      expect(recordedCount(p.stderr), name).toBe(recordedCount(j.stderr));
    }
  });

  it.skipIf(note.missing)(note.title('--export-to-otlp: a command that exits at once (cat) sends every record'), async () => {
    const dir = tempDir('runlens-record-otlp-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl');
    const db = await openModel();
    const rx = new OtlpReceiver({ db, port: 0, flushIntervalMs: 50 });
    await rx.start();
    try {
      const out = path.join(dir, 'run.jsonl');
      const r = await cliAsync(['record', '-o', out, '--export-to-otlp', '--', 'cat', log], { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/recorded 1 invocation, 4 nodes, 158 records/);
      await rx.close();
      const nodes = await db.all(`SELECT count(*)::INT AS n FROM spans WHERE unique_id IS NOT NULL AND span_name LIKE 'Node processed%'`);
      expect(nodes).toEqual([{ n: 4 }]);
    } finally {
      await rx.close();
      db.close();
    }
  });

  it('an output that cannot be written (a folder, a path through a file) is refused before the command starts', () => {
    const dir = tempDir('runlens-record-place-');
    mkdirSync(path.join(dir, 'isdir.jsonl'));
    writeFileSync(path.join(dir, 'afile'), '');
    for (const [out, said] of [['isdir.jsonl', 'isdir.jsonl: it is a folder, not a file'], ['afile/x.jsonl', 'afile: it is a file, not a folder']] as const) {
      const ran = path.join(dir, 'ran');
      const r = runCli(['record', '-o', path.join(dir, out), '--', 'touch', ran]);
      expect(r.code, out).toBe(2);
      expect(r.stderr, out).toContain(path.join(dir, said));
      expect(existsSync(ran), out).toBe(false);
    }
  });

  it.skipIf(note.missing)(note.title('-o - whose reader goes away: the command runs to its end and its exit is said, record exits 2 (the output was cut)'), async () => {
    const dir = tempDir('runlens-record-gone-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl');
    const ended = path.join(dir, 'ended');
    const child = spawn(process.execPath, [CLI, 'record', '-o', '-', '--', 'sh', '-c', `cat '${log}'; sleep 1; touch '${ended}'; exit 4`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // the reader takes the first chunk and goes away (as `| head -c 100`)
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise((res) => child.on('close', (c) => res(c)));
    expect(code, stderr).toBe(2);
    expect(existsSync(ended)).toBe(true);
    expect(stderr).toContain('Done. PASS=3 WARN=0 ERROR=1 SKIP=0 TOTAL=4');
    expect(stderr).toContain('runlens: stdout: not written in full (its reader went away); the command exited 4\n');
  });

  it('a command that printed lines of which none gave a record says so', () => {
    const dir = tempDir('runlens-record-none-');
    const r = runCli(['record', '-o', path.join(dir, 'run.jsonl'), '--', 'sh', '-c', 'echo hello; echo world']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('recorded 0 invocations');
    expect(r.stderr).toMatch(/runlens: warning: the command printed 2 lines but none was a dbt JSON log event/);
  });

  it.skipIf(note.missing)(note.title('live lines that begin as JSON but cannot be read, or are not UTF-8, are said by number'), () => {
    const dir = tempDir('runlens-record-unread-');
    const lines = readFileSync(sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl'), 'latin1').split('\n');
    const nodeLine = lines.findIndex((l) => l.includes('"node_status": "pass"'));
    expect(nodeLine).toBeGreaterThan(2);
    lines[1] = lines[1]!.slice(0, 40); // cut mid-way
    lines[nodeLine] = lines[nodeLine]!.replace('"unique_id": "', '"unique_id": "\xff').replace('"unique_id":"', '"unique_id":"\xff');
    const log = path.join(dir, 'live.log');
    writeFileSync(log, Buffer.from(lines.join('\n'), 'latin1'));
    const r = runCli(['record', '-o', path.join(dir, 'run.jsonl'), '--', 'cat', log]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/runlens: warning: the command's output had 1 line that began as JSON but could not be read \(no record\): line 2 \(malformed JSON/);
    expect(r.stderr).toContain(`runlens: warning: the command's output had 1 line not valid UTF-8 (read with U+FFFD in place of the bad bytes): line ${nodeLine + 1}\n`);
  });

  it.skipIf(note.missing)(note.title('an engine that dies before its closing lines fails the run; a replay of a cut log that exits 0 leaves it incomplete, as the log read in place'), () => {
    const dir = tempDir('runlens-record-cut-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    const runOf = (out: string) => runCli(['query', '--sql', 'SELECT status_message, failed, ended FROM runs', out, '--format', 'json']);
    const died = path.join(dir, 'died.jsonl');
    expect(runCli(['record', '-o', died, '--', 'sh', '-c', `head -n 81 '${log}'; exit 137`]).code).toBe(137);
    expect(JSON.parse(runOf(died).stdout)).toEqual([{ status_message: 'the log ends before the command did (no CommandCompleted)', failed: true, ended: true }]);
    const cut = path.join(dir, 'cut.jsonl');
    writeFileSync(path.join(dir, 'cut.log'), readFileSync(log, 'utf8').split('\n').slice(0, 81).join('\n') + '\n');
    expect(runCli(['record', '-o', cut, '--', 'cat', path.join(dir, 'cut.log')]).code).toBe(0);
    expect(JSON.parse(runOf(cut).stdout)).toEqual([{ status_message: null, failed: false, ended: false }]);
  });

  it.skipIf(note.missing)(note.title('a cut-off run followed by another in one log (an appended dbt.log after a killed command) keeps its own times'), () => {
    const dir = tempDir('runlens-record-cut-then-');
    const cut = path.join(dir, 'cut.jsonl');
    writeFileSync(cut, readFileSync(sample(LEGACY, 'log_1.8.2_postgres_test_pass_fail.jsonl'), 'utf8').split('\n').slice(0, 40).join('\n') + '\n');
    const next = sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl');
    const joined = path.join(dir, 'joined.jsonl');
    writeFileSync(joined, readFileSync(cut, 'utf8') + readFileSync(next, 'utf8'));
    const rec = path.join(dir, 'rec.jsonl');
    expect(runCli(['record', '-o', rec, '--', 'cat', cut, next]).code).toBe(0);
    const q = (sql: string, input: string) => JSON.parse(runCli(['query', '--sql', sql, input, '--format', 'json']).stdout);
    const runsOf = (input: string) => q('SELECT engine_version, duration_ms, ended FROM runs ORDER BY engine_version', input);
    // the cut run stays open, its last time its own, not the next run's first
    const alone = runsOf(cut);
    expect(alone).toHaveLength(1);
    expect(alone[0]).toMatchObject({ ended: false });
    expect(alone[0].duration_ms).toBeLessThan(60_000);
    for (const input of [joined, rec]) {
      const runs = runsOf(input);
      expect(runs, input).toHaveLength(2);
      expect(runs.find((r: { engine_version: string }) => r.engine_version === '1.8.2'), input).toEqual(alone[0]);
    }
  });

  it.skipIf(note.missing)(note.title('replaying a cut-off log with cat gates as incomplete, as the log itself and its migration do'), () => {
    const dir = tempDir('runlens-record-cat-cut-');
    const cut = path.join(dir, 'cut.log');
    writeFileSync(cut, readFileSync(sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl'), 'utf8').split('\n').slice(0, 58).join('\n') + '\n');
    const rec = path.join(dir, 'rec.jsonl');
    expect(runCli(['record', '-o', rec, '--', 'cat', cut]).code).toBe(0);
    for (const input of [cut, rec]) {
      const g = runCli(['gate', input]);
      expect(g.code, input + g.stdout).toBe(1);
      expect(g.stdout).toContain('incomplete: the invocation never ended (the log ends before the command did');
    }
  });

  it.skipIf(note.missing)(note.title('an engine asked to print less (--quiet) that exits 0 without the closing lines ended its run'), () => {
    const dir = tempDir('runlens-record-quiet-');
    // what `--quiet` leaves on stdout: the warnings and errors only
    const script = path.join(dir, 'engine.mjs');
    writeFileSync(script, [
      "import { readFileSync } from 'node:fs';",
      `for (const l of readFileSync(${JSON.stringify(sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'))}, 'utf8').split('\\n'))`,
      "  if (/\"level\": \"(warn|error)\"/.test(l)) console.log(l);",
    ].join('\n'));
    const out = path.join(dir, 'quiet.jsonl');
    const r = runCli(['record', '-o', out, '--', process.execPath, script, 'run', '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/recorded 1 invocation, 1 node/);
    expect(JSON.parse(runCli(['query', '--sql', 'SELECT ended FROM runs', out, '--format', 'json']).stdout)).toEqual([{ ended: true }]);
    expect(runCli(['gate', out]).stdout).not.toMatch(/\d+ incomplete/);
  });

  it.skipIf(note.missing)(note.title('a log cut mid-node replayed by a command that exited 0: the node stays open and the run is incomplete, not "Interrupted"'), () => {
    const dir = tempDir('runlens-record-mid-');
    const part = path.join(dir, 'part.jsonl');
    writeFileSync(part, readFileSync(sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl'), 'utf8').split('\n').slice(0, 150).join('\n') + '\n');
    const out = path.join(dir, 'run.jsonl');
    const r = runCli(['record', '-o', out, '--', 'cat', part]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/recorded 1 invocation, 4 nodes, /);
    const g = runCli(['gate', out]);
    expect(g.code).toBe(1);
    expect(g.stdout).toContain('incomplete: the invocation never ended (the log ends before the command did');
    expect(g.stdout).toContain('4 node results were recorded, 1 of them not ended');
    expect(g.stdout).not.toContain('Interrupted');
  });

  it.skipIf(note.missing)(note.title('a signal passed on: a command that handles it keeps its own exit, one it ends is 128 + the signal; the summary gives the real exit'), async () => {
    const dir = tempDir('runlens-record-sig-');
    const log = sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl');
    const cases = [
      // handles SIGTERM and exits 0
      { script: `trap 'kill $p; exit 0' TERM; cat '${log}'; sleep 30 & p=$!; wait $p`, code: 0, said: 'the command exited 0 after SIGTERM' },
      // ended by SIGTERM
      { script: `cat '${log}'; exec sleep 30`, code: 143, said: 'the command was ended by SIGTERM' },
    ];
    for (const c of cases) {
      const out = path.join(dir, `run-${c.code}.jsonl`);
      const child = spawn(process.execPath, [CLI, 'record', '-o', out, '--', 'sh', '-c', c.script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const closed = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      // bounded wait until the whole log has been translated (the command then sleeps)
      for (let i = 0; i < 200 && !stderr.includes('Done. PASS=2'); i++) await new Promise((r) => setTimeout(r, 100));
      child.kill('SIGTERM');
      expect(await closed, stderr).toBe(c.code);
      expect(stderr).toContain(`; ${c.said}\n`);
    }
  });

  const haveScript = spawnSync('script', ['--version']).status === 0;
  it.skipIf(note.missing || !haveScript)(note.title('stdin a terminal, runlens a background job: a SIGINT sent to runlens alone is passed on (the terminal sent the command none)'), async () => {
    const dir = tempDir('runlens-record-bg-');
    const log = sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl');
    const out = path.join(dir, 'run.jsonl');
    const pidFile = path.join(dir, 'pid');
    const err = path.join(dir, 'err');
    // `set -m`: the job gets its own process group, not the terminal's foreground one; its stdin stays the terminal
    const job = `set -m; "${process.execPath}" "${CLI}" record -o "${out}" -- sh -c "cat '${log}'; exec sleep 30" 2>"${err}" & echo $! > "${pidFile}"; wait $!; echo "rc=$?"`;
    const child = spawn('script', ['-qec', job, '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const closed = new Promise((res) => child.on('close', res));
    const said = () => (existsSync(err) ? readFileSync(err, 'utf8') : '');
    for (let i = 0; i < 200 && !said().includes('Done. PASS=2'); i++) await new Promise((r) => setTimeout(r, 100));
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGINT');
    await closed;
    expect(stdout).toContain('rc=130');
    expect(said()).toContain('; the command was ended by SIGINT\n');
  });

  it('Ctrl-C: the engine is interrupted and its in-flight node ends canceled', async () => {
    const dir = tempDir('runlens-record-int-');
    const out = path.join(dir, 'run.jsonl');
    const script = path.join(dir, 'engine.mjs');
    writeFileSync(script, [
      `console.log(${JSON.stringify(line('MainReportVersion', { version: '=1.10.0', log_version: 3 }, 'info', 'Running with dbt=1.10.0'))});`,
      `console.log(${JSON.stringify(line('NodeStart', { node_info: node }))});`,
      `console.log(${JSON.stringify(line('LogStartLine', { node_info: node, index: 1, total: 1 }, 'info', '1 of 1 START sql table model p.slow'))});`,
      `console.log(${JSON.stringify(line('NodeExecuting', { node_info: node }))});`,
      'setInterval(() => {}, 1000);',
    ].join('\n'));
    const child = spawn(process.execPath, [CLI, 'record', '-o', out, '--', process.execPath, script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    // wait (bounded) until the node's SpanStart is on disk: JSONL is written as events arrive
    for (let i = 0; i < 200 && !(existsSync(out) && readFileSync(out, 'utf8').includes('Node processed (model.p.slow)')); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(out, 'utf8')).toContain('Node processed (model.p.slow)');
    child.kill('SIGINT');
    const code = await closed;
    expect(code).toBe(130);
    expect(stderr).toContain('1 of 1 START sql table model p.slow');
    const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const end = recs.find((r) => r.record_type === 'SpanEnd' && r.span_name === 'Node processed (model.p.slow)');
    expect(end.attributes.node_outcome).toBe('NODE_OUTCOME_CANCELED');
    const inv = recs.find((r) => r.record_type === 'SpanEnd' && r.event_type.endsWith('Invocation'));
    expect(inv.status).toEqual({ message: 'Interrupted', code: 2 });
    await expectValid(out);
  });
});
