import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import type { JsonlRecord, LogRecordRecord, SpanEndRecord } from '../../src/produce/record.js';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { FUSION, ROOT, sample, samplesNote } from '../helpers/samples.js';
import { logsJson, postOtlpJson, tracesJson } from './otlp-json.js';

/** Start the built CLI and resolve once it prints the URL it listens on. */
function startCli(
  args: string[],
  opts: { fileLimitKib?: number } = {},
): Promise<{ url: string; done: Promise<{ code: number | null; stderr: string; stdout: string }>; kill: (s: NodeJS.Signals) => void }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build`);
  // with a file limit (the shell's `ulimit -f`), a write past it fails with EFBIG, as on a full disk
  const [file, argv] =
    opts.fileLimitKib === undefined
      ? [process.execPath, [CLI, ...args]]
      : ['bash', ['-c', `ulimit -f ${opts.fileLimitKib} && exec "$0" "$@"`, process.execPath, CLI, ...args]];
  const child = spawn(file, argv, { env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const done = new Promise<{ code: number | null; stderr: string; stdout: string }>((res) => child.on('close', (code) => res({ code, stderr, stdout })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${stderr}`)), 30_000);
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, done, kill: (s) => child.kill(s) });
      }
    });
    child.on('close', () => reject(new Error(`exited early: ${stderr}`)));
  });
}

async function send(jsonl: string, url: string): Promise<void> {
  const sink = new OtlpSink({ endpoint: url, level: 'trace' });
  for await (const r of readRecords(jsonl)) sink.write(r);
  await sink.close();
}

/** A generated run sent to `receive` writing --db, --jsonl and --parquet, every request answered. */
async function receiveGenerated(nodes: number, failRate: number) {
  const dir = tempDir();
  const jsonl = path.join(dir, 'run.jsonl');
  await generate({ output: jsonl, runs: 1, nodes, seed: 5, failRate });
  const db = path.join(dir, 'live.duckdb');
  const out = path.join(dir, 'copy.jsonl');
  const pq = path.join(dir, 'copy.parquet');
  const rx = await startCli(['receive', '--port', '0', '--db', db, '--jsonl', out, '--parquet', pq]);
  await send(jsonl, rx.url);
  return { jsonl, db, out, pq, rx };
}

describe('runlens receive and gate --receive (built CLI)', () => {
  it('receive writes the model, JSONL and Parquet; SIGTERM flushes so query --db works right after', async () => {
    const { jsonl, db, out, pq, rx } = await receiveGenerated(30, 0.2);
    rx.kill('SIGTERM');
    const r = await rx.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/stopped \(SIGTERM\): \d+ spans and \d+ logs received, 0 rejected/);
    // a line per run as it starts and as it ends, before the stop
    const trace = JSON.parse(runCli(['runs', jsonl, '--format', 'json']).stdout)[0].trace_id as string;
    const started = r.stderr.indexOf(`runlens: run ${trace} (build) started`);
    const ended = r.stderr.search(new RegExp(`runlens: run ${trace} \\(build\\) ended FAILED after [\\d.]+ s: 30 nodes, \\d+ errors?, \\d+ failed tests?`));
    expect(started).toBeGreaterThanOrEqual(0);
    expect(ended).toBeGreaterThan(started);
    expect(ended).toBeLessThan(r.stderr.indexOf('stopped (SIGTERM)'));
    const direct = JSON.parse(runCli(['query', 'outcome-summary', jsonl, '--format', 'json']).stdout);
    const live = JSON.parse(runCli(['query', 'outcome-summary', '--db', db, '--format', 'json']).stdout);
    expect(live).toEqual(direct);
    for (const f of [out, pq]) {
      const v = runCli(['validate', f]);
      expect(v.code, v.stdout + v.stderr).toBe(0);
      expect(JSON.parse(runCli(['query', 'outcome-summary', f, '--format', 'json']).stdout)).toEqual(direct);
    }
  });

  it('a second SIGTERM or Ctrl-C while receive is stopping changes nothing: every record answered 200 is written', async () => {
    const { jsonl, db, out, pq, rx } = await receiveGenerated(3000, 0.1);
    rx.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 50));
    rx.kill('SIGINT');
    rx.kill('SIGTERM');
    const r = await rx.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/stopped \(SIGTERM\)/);
    const counts = (args: string[]) => JSON.parse(runCli(['query', '--sql', "SELECT count(*)::INT AS n FROM records WHERE record_type <> 'SpanStart'", ...args, '--format', 'json']).stdout);
    const sent = counts([jsonl]);
    for (const args of [['--db', db], [out], [pq]]) expect(counts(args), args.join(' ')).toEqual(sent);
  });

  it('gate --receive --until-idle gates on what a run streamed', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 40, seed: 3, failRate: 0.3 });
    const expected = runCli(['gate', jsonl]);
    expect(expected.code).toBe(1);
    const g = await startCli(['gate', '--receive', '--port', '0', '--until-idle', '1s']);
    await send(jsonl, g.url);
    const r = await g.done;
    expect(r.code).toBe(1);
    expect((r as unknown as { stdout: string }).stdout).toBe(expected.stdout);
  });

  it('gate --receive does not pass a clean run when a request was refused whole (its records were never read)', async () => {
    const clean = path.join(ROOT, 'samples/clean-build.jsonl');
    expect(runCli(['gate', clean]).code).toBe(0);
    const g = await startCli(['gate', '--receive', '--port', '0', '--until-idle', '1s']);
    await send(clean, g.url);
    const bad = await fetch(`${g.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans": [' });
    expect(bad.status).toBe(400);
    const r = await g.done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).not.toContain('gate passed');
    expect(r.stderr).toMatch(/the gate cannot pass: 1 request was refused whole \(\/v1\/traces: 400 invalid JSON/);
  });

  it('gate --receive whose only request was refused whole ends after --until-idle naming it and the limit, not at --timeout', async () => {
    const g = await startCli(['gate', '--receive', '--port', '0', '--until-idle', '1s', '--timeout', '10m', '--max-body-mb', '0.01']);
    const big = await fetch(`${g.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceSpans: [], pad: 'x'.repeat(20_000) }) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toMatch(/request body over 10486 bytes \(raise --max-body-mb\)/);
    const r = await g.done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/1 request was refused whole \(\/v1\/traces: 413 request body over 10486 bytes/);
    expect(r.stderr).not.toContain('nothing received');
  });

  it('receive names the first request it refused whole on its stop line', async () => {
    const rx = await startCli(['receive', '--port', '0', '--max-body-mb', '0.01']);
    const big = await fetch(`${rx.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceLogs: [], pad: 'x'.repeat(20_000) }) });
    expect(big.status).toBe(413);
    rx.kill('SIGTERM');
    const r = await rx.done;
    expect(r.stderr).toMatch(/1 request refused whole \(the first: \/v1\/logs: 413 request body over 10486 bytes \(raise --max-body-mb\)\)/);
  });

  it('--queue-limit and --max-body-mb out of range are usage errors naming the option, for every command that receives', () => {
    // an address no machine has: were an option taken, the command would stop at listening, not wait
    const nowhere = ['--port', '0', '--host', '256.0.0.1'];
    for (const cmd of [['receive'], ['gate', '--receive'], ['explore', '--receive']]) {
      for (const [option, value, expected] of [
        ['--queue-limit', '0', '--queue-limit: expected a whole number of records, 1 or more; got 0'],
        ['--queue-limit', '-5', '--queue-limit: expected a whole number of records, 1 or more; got -5'],
        ['--queue-limit', '2.5', '--queue-limit: expected a whole number of records, 1 or more; got 2.5'],
        ['--queue-limit', 'abc', '--queue-limit: expected a whole number of records, 1 or more; got something else'],
        ['--max-body-mb', 'abc', '--max-body-mb: expected a size in MB greater than 0'],
        ['--max-body-mb', '0', '--max-body-mb: expected a size in MB greater than 0'],
        ['--max-body-mb', '-1', '--max-body-mb: expected a size in MB greater than 0'],
        ['--max-body-mb', '1e12', '--max-body-mb: expected a size in MB greater than 0'],
      ]) {
        const label = [...cmd, option, value].join(' ');
        const r = runCli([...cmd, ...nowhere, option, value]);
        expect(r.code, label).toBe(2);
        expect(r.stderr, label).toContain(expected);
        expect(r.stderr, label).not.toContain('internal error');
      }
    }
  });

  it('--parquet (or --jsonl) where no file can be written is exit 2 naming it, before receiving anything', () => {
    const dir = tempDir();
    const file = path.join(dir, 'a-file');
    writeFileSync(file, '');
    for (const [option, where, why] of [
      ['--parquet', path.join(file, 'y.parquet'), 'a file, not a folder'],
      ['--jsonl', path.join(file, 'y.jsonl'), 'a file, not a folder'],
      ['--parquet', dir, 'it is a folder, not a file'],
      ['--jsonl', dir, 'it is a folder, not a file'],
    ]) {
      // an address no machine has: were the path taken, the command would stop at listening, not wait
      const r = runCli(['receive', '--port', '0', '--host', '256.0.0.1', option, where]);
      expect(r.code, `${option} ${where}`).toBe(2);
      expect(r.stderr, `${option} ${where}`).toContain(why);
      expect(r.stderr).not.toContain('cannot listen');
    }
  });

  it('outputs that are one file (--db, --jsonl, --parquet; a symlink too) are exit 2 naming both flags, before receiving anything', () => {
    const dir = tempDir();
    const db = path.join(dir, 'model.duckdb');
    expect(runCli(['load', path.join(ROOT, 'samples/clean-build.jsonl'), '--db', db]).code).toBe(0);
    const before = runCli(['runs', '--db', db, '--format', 'json']);
    expect(before.code).toBe(0);
    const link = path.join(dir, 'link.jsonl');
    symlinkSync(db, link);
    const fresh = path.join(dir, 'fresh.out');
    for (const [args, flags] of [
      [['--db', db, '--jsonl', db], '--db and --jsonl'],
      [['--db', db, '--parquet', db], '--db and --parquet'],
      [['--db', db, '--jsonl', link], '--db and --jsonl'],
      [['--jsonl', fresh, '--parquet', fresh], '--jsonl and --parquet'],
      [['--db', fresh, '--jsonl', path.join(dir, '.', 'fresh.out')], '--db and --jsonl'],
    ] as const) {
      const r = runCli(['receive', '--port', '0', '--host', '256.0.0.1', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`${flags} name the same file`);
      expect(r.stderr).not.toContain('cannot listen');
    }
    expect(existsSync(fresh)).toBe(false);
    expect(runCli(['runs', '--db', db, '--format', 'json']).stdout).toBe(before.stdout);
  });

  it('an output that fails while receiving: the stop line says so and the exit code is 2 (records answered 200 are not in it)', async () => {
    const dir = tempDir();
    const pq = path.join(dir, 'copy.parquet');
    const rx = await startCli(['receive', '--port', '0', '--parquet', pq]);
    await send(path.join(ROOT, 'samples/clean-build.jsonl'), rx.url);
    // the place of the file taken by a folder that is not empty: the file cannot be put there at stop
    mkdirSync(pq);
    writeFileSync(path.join(pq, 'in-the-way'), '');
    rx.kill('SIGTERM');
    const r = await rx.done;
    expect(r.code, r.stderr).toBe(2);
    const stop = r.stderr.split('\n').find((l) => l.includes('stopped (SIGTERM)'));
    expect(stop).toContain(`; not written in full: parquet ${pq} (`);
  });

  it('a model whose disk fills up while receiving: receive stops promptly, its stop line names the model, and the exit code is 2', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'live.duckdb');
    const big = path.join(dir, 'big.jsonl');
    await generate({ output: big, runs: 1, nodes: 2000, seed: 9, failRate: 0.1 });
    const rx = await startCli(['receive', '--port', '0', '--db', db], { fileLimitKib: 1024 });
    // a first run fits: the database took records before it failed
    await send(path.join(ROOT, 'samples/clean-build.jsonl'), rx.url);
    await new Promise((r) => setTimeout(r, 1500));
    await send(big, rx.url);
    rx.kill('SIGTERM');
    const r = await rx.done;
    expect(r.code, r.stderr).toBe(2);
    const stop = r.stderr.split('\n').find((l) => l.includes('stopped (SIGTERM)'));
    expect(stop).toMatch(/acknowledged but refused by the database/);
    expect(stop).toContain(`; not written in full: the model ${db} (`);
  }, 120_000);

  it('a port in use is exit 2 "cannot listen" for receive and gate --receive', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = String((busy.address() as AddressInfo).port);
    try {
      for (const args of [['receive'], ['gate', '--receive', '--timeout', '2s']]) {
        const r = runCli([...args, '--port', port]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toContain(`cannot listen on 127.0.0.1:${port}`);
        expect(r.stderr).not.toContain('internal error');
      }
    } finally {
      await new Promise((r) => busy.close(r));
    }
  });
});

const note = samplesNote(FUSION);

describe.skipIf(note.missing)(note.title('gate --receive on a real failed run whose failing spans the receiver rejected'), () => {
  /**
   * The real run with one malformed attribute (an intValue "1.0") on each span of its errored unit
   * test and its failed test, as a producer bug would send them: the receiver rejects those four.
   */
  async function sendDamaged(url: string): Promise<void> {
    const records: JsonlRecord[] = [];
    for await (const r of readRecords(sample(FUSION, 'forwarder-otel_failed-preview120.jsonl'))) records.push(r);
    const spans = records.filter((r): r is SpanEndRecord => r.record_type === 'SpanEnd');
    const traces = tracesJson(spans);
    let damaged = 0;
    for (const s of traces.resourceSpans![0]!.scopeSpans[0]!.spans) {
      if (/NODE_OUTCOME_ERROR|TEST_OUTCOME_FAILED/.test(JSON.stringify(s.attributes))) {
        (s.attributes as object[]).push({ key: 'retries', value: { intValue: '1.0' } });
        damaged++;
      }
    }
    expect(damaged).toBe(4);
    const t = await postOtlpJson(url, 'traces', traces);
    expect(t).toMatchObject({ status: 200, body: { partialSuccess: { rejectedSpans: '4' } } });
    const l = await postOtlpJson(url, 'logs', logsJson(records.filter((r): r is LogRecordRecord => r.record_type === 'LogRecord')));
    expect(l).toEqual({ status: 200, body: {} });
  }

  it('never passes: exit 2, saying how many records were rejected and why', async () => {
    const g = await startCli(['gate', '--receive', '--port', '0', '--until-idle', '1s', '--fail-on', 'error,incomplete']);
    await sendDamaged(g.url);
    const r = await g.done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).not.toContain('gate passed');
    expect(r.stderr).toContain('the gate cannot pass: 4 records sent were rejected');
    expect(r.stderr).toContain('attributes[');
    expect(r.stderr).toContain('an integer expected');
    expect(r.stderr).not.toContain('internal error');
  });

  it('still reports the failures it did see (exit 1), and says records were rejected', async () => {
    const g = await startCli(['gate', '--receive', '--port', '0', '--until-idle', '1s']);
    await sendDamaged(g.url);
    const r = await g.done;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('gate FAILED');
    expect(r.stderr).toContain('4 records sent were rejected');
  });
});
