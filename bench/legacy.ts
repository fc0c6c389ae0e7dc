/**
 * Legacy translation speed: `migrate` of a 100,000-result run_results.json (goal < 5 s), and
 * `record` on a replayed 1M-line JSON log vs the same replay piped to /dev/null (goal < 5% added
 * wall time). The replay is run twice: unpaced (cat: pure translation cost) and paced like a live
 * engine. Runnable alone: `node dist/bench/legacy.js` after a build.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateFiles } from '../src/legacy/migrate.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');

export interface LegacyBenchResult {
  migrate100kMs: number;
  recordUnpaced: { baselineMs: number; recordMs: number; addedPct: number };
  recordPaced: { baselineMs: number; recordMs: number; addedPct: number; linesPerSecond: number };
}

const T0 = Date.UTC(2026, 0, 5, 10);
const iso = (ms: number) => new Date(T0 + ms).toISOString().replace('Z', '000Z');

function bigRunResults(file: string, n: number): void {
  const statuses = ['success', 'success', 'success', 'pass', 'pass', 'fail', 'warn', 'error', 'skipped'];
  const results = [];
  for (let i = 0; i < n; i++) {
    const st = statuses[i % statuses.length]!;
    const isTest = st === 'pass' || st === 'fail' || st === 'warn';
    const t = i * 3;
    results.push({
      status: st, thread_id: `Thread-${i % 8}`, execution_time: 0.002, adapter_response: {}, message: null, failures: isTest ? (st === 'pass' ? 0 : 2) : null,
      unique_id: isTest ? `test.bench.t_${i}.abc${i}` : `model.bench.m_${i}`,
      timing: st === 'skipped' ? [] : [
        { name: 'compile', started_at: iso(t), completed_at: iso(t + 1) },
        { name: 'execute', started_at: iso(t + 1), completed_at: iso(t + 2) },
      ],
    });
  }
  writeFileSync(file, JSON.stringify({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json', dbt_version: '1.9.0', generated_at: iso(n * 3 + 10), invocation_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
    results, elapsed_time: n * 0.003 + 1, args: { which: 'build' },
  }));
}

/** ~1M lines: per node the debug lifecycle plus SQL query chatter, like logs/dbt.log. */
async function bigLog(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file);
  const inv = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
  const ev = (name: string, level: string, ms: number, data: object, msg = name) =>
    JSON.stringify({ data, info: { category: '', code: 'Q000', extra: {}, invocation_id: inv, level, msg, name, pid: 7, thread: 'Thread-1 (worker)', ts: iso(ms) } }) + '\n';
  let n = 0;
  let buf = ev('MainReportVersion', 'info', 0, { log_version: 3, version: '=1.9.0' });
  n++;
  for (let i = 0; n < lines - 1; i++) {
    const ni = { node_info: { unique_id: `model.bench.m_${i}`, resource_type: 'model', node_name: `m_${i}`, node_path: `m_${i}.sql`, materialized: 'table', node_status: 'started', node_started_at: '', node_finished_at: '' } };
    const t = i * 5;
    buf += ev('NodeStart', 'debug', t, ni) + ev('LogStartLine', 'info', t, { ...ni, index: i, total: 0 }, `${i} of N START sql table model m_${i}`) + ev('NodeCompiling', 'debug', t, ni) + ev('NodeExecuting', 'debug', t + 1, ni);
    for (let q = 0; q < 4; q++) buf += ev('SQLQuery', 'debug', t + 2, { ...ni, conn_name: `model.bench.m_${i}`, sql: `/* q${q} */ create table m_${i} as select ${q}` });
    buf += ev('LogModelResult', 'info', t + 3, { ...ni, status: 'SELECT 1', index: i, total: 0, execution_time: 0.1 }, `${i} of N OK created sql table model m_${i}`);
    buf += ev('NodeFinished', 'debug', t + 3, { ...ni, run_result: { status: 'success', message: 'SELECT 1', timing_info: [], num_failures: 0, execution_time: 0.1, adapter_response: {} } });
    n += 10;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once("drain", () => r()));
      buf = '';
    }
  }
  out.write(buf + ev('CommandCompleted', 'debug', lines * 5, { completed_at: iso(lines * 5), elapsed: 1, success: true }));
  await new Promise<void>((res) => out.end(res));
}

const REPLAY = `
import { createReadStream } from 'node:fs';
const [file, rate] = process.argv.slice(2);
const perTick = Math.max(1, Math.round(Number(rate) / 100));
const lines = [];
let pending = '';
const rs = createReadStream(file, { highWaterMark: 1 << 20 });
const t0 = Date.now(); let sent = 0; let buf = [];
const flush = async () => {
  const text = buf.join('\\n') + '\\n'; buf = [];
  if (!process.stdout.write(text)) await new Promise((r) => process.stdout.once('drain', r));
  // pace: never run ahead of rate lines/s
  const due = t0 + (sent / Number(rate)) * 1000;
  const wait = due - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
};
for await (const chunk of rs) {
  const parts = (pending + chunk).split('\\n'); pending = parts.pop();
  for (const p of parts) { buf.push(p); sent++; if (buf.length >= perTick) await flush(); }
}
if (pending) buf.push(pending);
if (buf.length) await flush();
`;

function wall(cmd: string, args: string[]): number {
  const t = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return performance.now() - t;
}

export async function runLegacyBench(o: { results?: number; lines?: number; rate?: number } = {}): Promise<LegacyBenchResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-legacy-'));
  try {
    const rr = path.join(dir, 'run_results.json');
    bigRunResults(rr, o.results ?? 100_000);
    let t = performance.now();
    await migrateFiles([rr], { out: path.join(dir, 'migrated.jsonl') });
    const migrate100kMs = performance.now() - t;
    console.log(`legacy: migrate ${o.results ?? 100_000} results -> JSONL: ${(migrate100kMs / 1000).toFixed(2)} s (goal < 5 s)`);

    const log = path.join(dir, 'dbt.log');
    const lines = o.lines ?? 1_000_000;
    await bigLog(log, lines);
    const replay = path.join(dir, 'replay.mjs');
    writeFileSync(replay, REPLAY);
    const out = path.join(dir, 'recorded.jsonl');

    const base1 = wall('sh', ['-c', `cat '${log}' > /dev/null`]);
    const rec1 = wall(process.execPath, [CLI, 'record', '-o', out, '--', 'cat', log]);
    const recordUnpaced = { baselineMs: base1, recordMs: rec1, addedPct: ((rec1 - base1) / base1) * 100 };
    console.log(`legacy: record, ${lines} lines unpaced (cat): baseline cat > /dev/null ${(base1 / 1000).toFixed(2)} s, record ${(rec1 / 1000).toFixed(2)} s`);

    const rate = o.rate ?? 100_000;
    const base2 = wall('sh', ['-c', `'${process.execPath}' '${replay}' '${log}' ${rate} > /dev/null`]);
    const rec2 = wall(process.execPath, [CLI, 'record', '-o', out, '--', process.execPath, replay, log, String(rate)]);
    const recordPaced = { baselineMs: base2, recordMs: rec2, addedPct: ((rec2 - base2) / base2) * 100, linesPerSecond: rate };
    console.log(`legacy: record, ${lines} lines replayed at ${rate} lines/s: baseline > /dev/null ${(base2 / 1000).toFixed(2)} s, record ${(rec2 / 1000).toFixed(2)} s, added ${recordPaced.addedPct.toFixed(1)}% (goal < 5%)`);
    return { migrate100kMs, recordUnpaced, recordPaced };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  runLegacyBench().then((r) => console.log(JSON.stringify(r)), (e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
