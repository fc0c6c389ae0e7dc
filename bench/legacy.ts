/**
 * Legacy translation speed: `runlens migrate` of a 100,000-result run_results.json (goal < 5 s);
 * `runlens gate` reading that file in place against `migrate` then `gate` of its output (goal: in
 * place not slower; pairs alternated, each figure beside its pair's); and
 * `runlens record` on a replayed 1M-line JSON log vs the same replay piped to /dev/null (goal < 5%
 * added wall time). The replay is run twice: unpaced (cat: pure translation cost, beside a
 * parse-only floor) and paced like a live engine. Every figure is a CLI run as a user would start
 * it (the program itself, so the node flags of its shebang apply), wall and CPU time (the machine
 * may be shared: compare within one run).
 * Runnable alone: `node dist/bench/legacy.js` after a build.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, statSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');

export interface LegacyBenchResult {
  /** default threads (up to 4 for a file this size, one per core) */
  migrate100k: Run & { records: number; parseReference: Run; oneThread: Run };
  /** gate of the 100k-result file read in place, against migrate + gate of the output (each pair in the order run) */
  gateInPlace: { pairs: { inPlace: Run; twoSteps: Run }[]; inPlace: Run; twoSteps: Run; wallRatio: number; cpuRatio: number };
  recordUnpaced: { baseline: Run; parseOnly: Run; record: Run; records: number; addedPct: number };
  recordPaced: { baseline: Run; record: Run; records: number; addedPct: number; linesPerSecond: number };
  /** ms from an engine writing an info line to its text reaching record's stderr reader, vs the engine piped straight to it */
  humanLatency: { record: Latency; direct: Latency; linesPerSecond: number };
}

export interface Latency {
  lines: number;
  p50: number;
  p99: number;
  max: number;
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

/** A line parse of the whole log, the cheapest translation can get: the floor for the unpaced figure. */
const PARSE_ONLY = `
import { createReadStream } from 'node:fs';
let rest = '', n = 0;
for await (const chunk of createReadStream(process.argv[2], { encoding: 'utf8', highWaterMark: 1 << 16 })) {
  const s = rest + chunk; let i = 0, j;
  while ((j = s.indexOf('\\n', i)) >= 0) { if (JSON.parse(s.slice(i, j)).info) n++; i = j + 1; }
  rest = s.slice(i);
}
`;

/** A live engine for latency: every 10 ms, one tick of debug chatter plus one info line whose message is its send time. */
const LATENCY_ENGINE = `
const [rate, ticks] = process.argv.slice(2).map(Number);
const perTick = Math.max(2, Math.round(rate / 100));
const ev = (name, level, msg, data) => JSON.stringify({ data, info: { category: '', code: 'Q000', extra: {}, invocation_id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', level, msg, name, pid: 7, thread: 'Thread-1', ts: new Date().toISOString() } }) + '\\n';
process.stdout.write(ev('MainReportVersion', 'info', 'Running with dbt=1.9.0', { version: '=1.9.0', log_version: 3 }));
let tick = 0;
const iv = setInterval(() => {
  const node = { node_info: { unique_id: 'model.p.m_' + tick, resource_type: 'model', node_name: 'm_' + tick, node_path: 'm.sql', materialized: 'table', node_status: 'started' } };
  let s = '';
  for (let k = 1; k < perTick; k++) s += ev('SQLQuery', 'debug', 'On model.p.m_' + tick + ': select ' + k, { ...node, sql: 'select ' + k });
  process.stdout.write(s + ev('LogStartLine', 'info', 'sent=' + Date.now(), node));
  if (++tick >= ticks) clearInterval(iv);
}, 10);
`;

/** Reads the human text (or the raw stream) and prints the delay of every "sent=" line as JSON. */
const LATENCY_READER = `
let rest = '';
const d = [];
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  const now = Date.now();
  const ls = (rest + c).split('\\n');
  rest = ls.pop();
  for (const l of ls) { const m = /sent=(\\d+)/.exec(l); if (m) d.push(now - Number(m[1])); }
});
process.stdin.on('end', () => {
  d.sort((a, b) => a - b);
  const p = (q) => d[Math.min(d.length - 1, Math.floor(q * d.length))] ?? -1;
  console.log(JSON.stringify({ lines: d.length, p50: p(0.5), p99: p(0.99), max: d[d.length - 1] ?? -1 }));
});
`;

function latency(pipeline: string): Latency {
  const r = spawnSync('sh', ['-c', pipeline], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (r.status !== 0) throw new Error(`${pipeline} exited ${r.status}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Latency;
}

export interface Run {
  wallMs: number;
  /** user + system CPU of the command and every process it waited for (all cores) */
  cpuMs: number;
  /** the command's peak resident memory (MB), where /usr/bin/time can tell it */
  peakRssMB?: number;
}

/** CPU time of waited-for children so far (/proc/self/stat cutime + cstime; 0 where there is no /proc). */
function childrenCpuMs(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); cutime and cstime are fields 16 and 17, in clock ticks (100 Hz on Linux)
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

/** GNU time, which reports a command's peak RSS; the figures go without it where it is missing. */
const GNU_TIME = '/usr/bin/time';

function run(cmd: string, args: string[], okCodes: number[] = [0]): Run {
  const rssFile = existsSync(GNU_TIME) ? path.join(tmpdir(), `runlens-bench-rss-${process.pid}`) : undefined;
  const [file, argv] = rssFile ? [GNU_TIME, ['-f', '%M', '-o', rssFile, cmd, ...args]] : [cmd, args];
  const c0 = childrenCpuMs();
  const t = performance.now();
  const r = spawnSync(file, argv, { stdio: ['ignore', 'ignore', 'ignore'] });
  const wallMs = performance.now() - t;
  if (!okCodes.includes(r.status ?? -1)) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  const peakKB = rssFile ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) : NaN;
  if (rssFile) rmSync(rssFile, { force: true });
  return { wallMs, cpuMs: childrenCpuMs() - c0, ...(Number.isFinite(peakKB) ? { peakRssMB: peakKB / 1024 } : {}) };
}

const sum = (a: Run, b: Run): Run => ({ wallMs: a.wallMs + b.wallMs, cpuMs: a.cpuMs + b.cpuMs });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `gate` of a run_results.json read in place, against `migrate` then `gate` of its output, in
 * alternating pairs (the first of each pair alternates too). The gate fails (exit 1): the file has
 * errors and failed tests.
 */
function gateInPlace(rr: string, dir: string, pairs: number): LegacyBenchResult['gateInPlace'] {
  const out = path.join(dir, 'gate-migrated.jsonl');
  const direct = () => run(CLI, ['gate', rr], [1]);
  const twoSteps = () => {
    const m = run(CLI, ['migrate', rr, '-o', out]);
    const g = run(CLI, ['gate', out], [1]);
    rmSync(out);
    return sum(m, g);
  };
  const measured: { inPlace: Run; twoSteps: Run }[] = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      const a = direct();
      measured.push({ inPlace: a, twoSteps: twoSteps() });
    } else {
      const b = twoSteps();
      measured.push({ inPlace: direct(), twoSteps: b });
    }
  }
  const med = (k: 'inPlace' | 'twoSteps'): Run => ({ wallMs: median(measured.map((p) => p[k].wallMs)), cpuMs: median(measured.map((p) => p[k].cpuMs)) });
  const inPlace = med('inPlace');
  const two = med('twoSteps');
  return { pairs: measured, inPlace, twoSteps: two, wallRatio: inPlace.wallMs / two.wallMs, cpuRatio: inPlace.cpuMs / two.cpuMs };
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const fig = (r: Run) => `${s(r.wallMs)} wall / ${s(r.cpuMs)} CPU${r.peakRssMB === undefined ? '' : ` / ${r.peakRssMB.toFixed(0)} MB peak RSS`}`;
const pct = (a: number, b: number) => ((a - b) / b) * 100;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const lineCount = (file: string) => {
  const b = readFileSync(file);
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
};

/**
 * The paced replay's default rate. The busiest second in the real logs of ../shared/samples/legacy-dbt-core
 * holds 92 lines (1.10.15 duckdb test; the 1.8.2 postgres builds peak at 44-58 lines/s and average
 * 9-21), the busiest 100 ms holds 83 (the parse burst at start). 20,000 lines/s is over 200x that
 * busiest second: a very large project on many threads, still a live engine rather than a file.
 */
export const PACED_LINES_PER_SECOND = 20_000;

export async function runLegacyBench(o: { results?: number; lines?: number; rate?: number; pairs?: number } = {}): Promise<LegacyBenchResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-legacy-'));
  try {
    const results = o.results ?? 100_000;
    const rr = path.join(dir, 'run_results.json');
    bigRunResults(rr, results);
    const migrated = path.join(dir, 'migrated.jsonl');
    const parseScript = path.join(dir, 'parse-only.mjs');
    writeFileSync(parseScript, PARSE_ONLY);
    console.log(`legacy: load average ${load()} (2 cores shared: compare CPU times and ratios within this run)`);
    const rrParse = run(process.execPath, ['-e', `JSON.parse(require('fs').readFileSync(${JSON.stringify(rr)}, 'utf8'))`]);
    const mig1 = run(CLI, ['migrate', rr, '-o', migrated, '--jobs', '1']);
    rmSync(migrated);
    const mig = run(CLI, ['migrate', rr, '-o', migrated]);
    const migratedRecords = lineCount(migrated);
    rmSync(migrated);
    console.log(`legacy: migrate ${results} results (${(statSync(rr).size / 2 ** 20).toFixed(0)} MB) -> JSONL (CLI, start-up included): ${fig(mig)} with the default threads (${Math.min(availableParallelism(), 4)} here), ${migratedRecords} records (goal < 5 s); --jobs 1: ${fig(mig1)}; reference: node reading + JSON.parse of the file ${fig(rrParse)}`);
    const gate = gateInPlace(rr, dir, o.pairs ?? 3);
    for (const [i, p] of gate.pairs.entries()) console.log(`legacy:   pair ${i + 1}: gate in place ${fig(p.inPlace)}; migrate + gate ${fig(p.twoSteps)}`);
    console.log(`legacy: gate of ${results} results read in place ${fig(gate.inPlace)} vs migrate then gate of its output ${fig(gate.twoSteps)} (medians of ${gate.pairs.length} pairs): ${gate.wallRatio.toFixed(2)}x wall, ${gate.cpuRatio.toFixed(2)}x CPU (goal: in place not slower, <= 1.00x)`);

    const log = path.join(dir, 'dbt.log');
    const lines = o.lines ?? 1_000_000;
    await bigLog(log, lines);
    const replay = path.join(dir, 'replay.mjs');
    writeFileSync(replay, REPLAY);
    // A fresh output path per run: deleting the previous run's 600 MB file is no part of recording.
    const out = path.join(dir, 'recorded.jsonl');
    const out2 = path.join(dir, 'recorded-paced.jsonl');

    const base1 = run('sh', ['-c', `cat '${log}' > /dev/null`]);
    const parse1 = run(process.execPath, [parseScript, log]);
    const rec1 = run(CLI, ['record', '-o', out, '--', 'cat', log]);
    const records1 = lineCount(out);
    rmSync(out);
    const recordUnpaced = { baseline: base1, parseOnly: parse1, record: rec1, records: records1, addedPct: pct(rec1.wallMs, base1.wallMs) };
    console.log(`legacy: record, ${lines} lines unpaced (cat): baseline cat > /dev/null ${fig(base1)}; record ${fig(rec1)}, ${records1} records, added ${recordUnpaced.addedPct.toFixed(0)}%`);
    console.log(`legacy:   floor: node only splitting and JSON.parse-ing the lines ${fig(parse1)} (${(parse1.wallMs / base1.wallMs).toFixed(0)}x cat): under 5% over cat cannot hold unpaced; record / parse-only: ${(rec1.wallMs / parse1.wallMs).toFixed(2)}x wall, ${(rec1.cpuMs / parse1.cpuMs).toFixed(2)}x CPU`);
    console.log(`legacy:   record translates ${Math.round(lines / (rec1.cpuMs / 1000)).toLocaleString('en-US')} lines per CPU-second: the fastest live stream it keeps up with on one free core`);

    const rate = o.rate ?? PACED_LINES_PER_SECOND;
    const base2 = run('sh', ['-c', `'${process.execPath}' '${replay}' '${log}' ${rate} > /dev/null`]);
    const rec2 = run(CLI, ['record', '-o', out2, '--', process.execPath, replay, log, String(rate)]);
    const records2 = lineCount(out2);
    const recordPaced = { baseline: base2, record: rec2, records: records2, addedPct: pct(rec2.wallMs, base2.wallMs), linesPerSecond: rate };
    console.log(`legacy: record, ${lines} lines replayed at ${rate} lines/s: baseline > /dev/null ${fig(base2)}; record ${fig(rec2)}, ${records2} records, added ${recordPaced.addedPct.toFixed(1)}% wall (goal < 5%), +${s(rec2.cpuMs - base2.cpuMs)} CPU`);

    // Transparency: how long an info line takes from the engine to record's human output (stderr).
    const le = path.join(dir, 'latency-engine.mjs');
    const lr = path.join(dir, 'latency-reader.mjs');
    writeFileSync(le, LATENCY_ENGINE);
    writeFileSync(lr, LATENCY_READER);
    const engine = `'${process.execPath}' '${le}' ${rate} 1000`;
    const direct = latency(`${engine} | '${process.execPath}' '${lr}'`);
    const viaRecord = latency(`'${CLI}' record -o '${path.join(dir, 'latency.jsonl')}' -- ${engine} 2>&1 >/dev/null | '${process.execPath}' '${lr}'`);
    const ms = (l: Latency) => `p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.lines} lines)`;
    console.log(`legacy: record's human text, engine at ${rate} lines/s for 10 s: ${ms(viaRecord)}; engine piped straight to the same reader: ${ms(direct)}`);
    const humanLatency = { record: viaRecord, direct, linesPerSecond: rate };
    console.log(`legacy: load average ${load()}`);
    return { migrate100k: { ...mig, records: migratedRecords, parseReference: rrParse, oneThread: mig1 }, gateInPlace: gate, recordUnpaced, recordPaced, humanLatency };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  // node dist/bench/legacy.js [--results N] [--lines N] [--rate LINES_PER_SECOND] [--pairs N]
  const arg = (k: string) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  runLegacyBench({ results: arg('results'), lines: arg('lines'), rate: arg('rate'), pairs: arg('pairs') }).then((r) => console.log(JSON.stringify(r)), (e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
