/**
 * Receiver bench (issue 7): spans per second sustained over loopback in batches of 512, the client
 * (bench/receive-client.ts, its own process) and the receiver in the same run, beside DuckDB's own
 * load of the same records from JSONL. Reports wall and CPU time of both sides and the load average
 * (the machine is shared: CPU time and ratios are the figures to compare).
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/receive.js [nodes]`.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { OtlpReceiver } from '../src/ingest/otlp-receiver.js';
import { generate } from '../src/produce/generate/index.js';
import { loadPaths, openModel } from '../src/store/load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const s = (ms: number) => (ms / 1000).toFixed(2);
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

/** What the receiver gets: OTLP carries no SpanStart, so the baseline file holds the same records. */
async function receivedRecords(from: string, to: string): Promise<void> {
  const out = createWriteStream(to);
  for await (const line of createInterface({ input: createReadStream(from), crlfDelay: Infinity })) {
    if (!line.startsWith('{"record_type":"SpanStart"') && !out.write(line + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
}

interface ClientReport {
  spans: number;
  logs: number;
  requests: number;
  retried: number;
  sendMs: number;
  sendCpuMs: number;
  encodeCpuMs: number;
}

export async function runReceiveBench(opts: { nodes?: number } = {}): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runlens-bench-rx-'));
  try {
    const full = path.join(dir, 'run.jsonl');
    const jsonl = path.join(dir, 'received.jsonl');
    await generate({ output: full, runs: 1, nodes: opts.nodes ?? 30_000, seed: 3, failRate: 0.01, detail: false });
    await receivedRecords(full, jsonl);
    console.log(`receive: load average before ${load()}`);

    // Baseline: DuckDB reads the same records from JSONL (read_json, normalize, derive).
    const base = await openModel();
    let c = process.cpuUsage();
    let t = performance.now();
    await loadPaths(base, [jsonl]);
    const loadMs = performance.now() - t;
    const loadCpu = cpuMs(process.cpuUsage(c));
    const spans = await base.scalar<number>('SELECT count(*)::INTEGER FROM spans');
    const logs = await base.scalar<number>('SELECT count(*)::INTEGER FROM logs');
    base.close();

    const db = await openModel();
    let first = 0;
    let cpuFirst: NodeJS.CpuUsage | undefined;
    const rx = new OtlpReceiver({
      db,
      port: 0,
      onReceive: () => {
        if (first) return;
        first = performance.now();
        cpuFirst = process.cpuUsage();
      },
    });
    await rx.start();
    const client = spawn(process.execPath, [path.join(here, 'receive-client.js'), jsonl, rx.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    client.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => client.on('close', r));
    if (code !== 0) throw new Error(`bench client exited ${code}`);
    const cr = JSON.parse(out) as ClientReport;
    const sent = performance.now();
    await rx.flush(false);
    const ingested = performance.now();
    const ingestCpu = cpuMs(process.cpuUsage(cpuFirst));
    await rx.close();
    const closed = performance.now();
    const rxCpu = cpuMs(process.cpuUsage(cpuFirst));
    const got = await db.scalar<number>('SELECT count(*)::INTEGER FROM spans');
    db.close();

    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000)).toLocaleString();
    console.log(
      `receive: ${spans.toLocaleString()} spans + ${logs.toLocaleString()} logs from a generated run (${cr.requests} requests of <= 512); ` +
        `${got.toLocaleString()} spans in the model after the stream${cr.retried ? `; ${cr.retried} requests retried after 429` : ''}`,
    );
    console.log(
      `receive: ingest ${rate(cr.spans, ingested - first)} spans/s sustained (first request to all records in DuckDB: ${s(ingested - first)} s wall, ` +
        `receiver CPU ${s(ingestCpu)} s, client CPU ${s(cr.sendCpuMs)} s sending; goal >= 50,000 spans/s)`,
    );
    console.log(
      `receive: through the model ${rate(cr.spans, closed - first)} spans/s (with the final derive: ${s(closed - first)} s wall, receiver CPU ${s(rxCpu)} s); ` +
        `client sent in ${s(sent - first)} s; it encoded beforehand (${s(cr.encodeCpuMs)} s CPU, not counted)`,
    );
    console.log(
      `receive: baseline: DuckDB load of the same records from JSONL ${s(loadMs)} s wall, ${s(loadCpu)} s CPU = ${rate(cr.spans, loadMs)} spans/s; ` +
        `receiver/baseline: wall ${((closed - first) / loadMs).toFixed(2)}x, CPU ${(rxCpu / loadCpu).toFixed(2)}x (+ client ${(cr.sendCpuMs / loadCpu).toFixed(2)}x)`,
    );
    // The machine is shared: wall time shows what this run got, CPU time what the work costs.
    const perSpan = (ms: number) => ((ms * 1000) / cr.spans).toFixed(1);
    console.log(
      `receive: CPU per span: receiver ${perSpan(rxCpu)} µs (${perSpan(ingestCpu)} µs before the final derive), client ${perSpan(cr.sendCpuMs)} µs, ` +
        `baseline ${perSpan(loadCpu)} µs; on 2 otherwise idle cores that is at most ${rate(cr.spans, (rxCpu + cr.sendCpuMs) / 2)} spans/s through the model`,
    );
    console.log(`receive: load average after ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runReceiveBench({ nodes: process.argv[2] ? Number(process.argv[2]) : undefined });
