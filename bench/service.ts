/**
 * Service bench: deliveries per second to a loopback receiver (SQLite store), latency from a run event
 * to its first delivery attempt at a steady 200 events/s, and list/get latency of the v3 API.
 * The receiver runs in a worker thread so it does not share the service's event loop.
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/service.js`; with RUNLENS_BENCH_DATABASE_URL (or
 * RUNLENS_TEST_DATABASE_URL) set it also measures 1, 2 and 3 `serve` processes on PostgreSQL
 * (runPostgresScaleBench).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createService } from '../src/service/server.js';
import { toMicros } from '../src/service/clock.js';
import { eventId, hashToken, newApiToken } from '../src/service/ids.js';
import { buildPayload } from '../src/service/payload.js';
import type { Job, Run } from '../src/service/store/types.js';

const RECEIVER = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const t = performance.timeOrigin + performance.now();
    res.writeHead(200).end('ok');
    parentPort.postMessage({ id: req.headers['webhook-id'], t });
  });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;

const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

export async function runServiceBench(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'runlens-bench-'));
  const worker = new Worker(RECEIVER, { eval: true });
  const arrivals = new Map<string, number>();
  let arrivedCount = 0;
  let onArrive: (() => void) | null = null;
  const port = await new Promise<number>((resolve) => {
    worker.on('message', (m: { port?: number; id?: string; t?: number }) => {
      if (m.port) return resolve(m.port);
      if (m.id && !arrivals.has(m.id)) arrivals.set(m.id, m.t!);
      arrivedCount++;
      onArrive?.();
    });
  });
  const svc = await createService({ dataDir: dir, allowPrivateTargets: true, jitter: 0 });
  const base = await svc.listen(0);
  const store = svc.store;
  const account = await store.createAccount('bench', toMicros(Date.now()));
  const token = newApiToken();
  await store.createToken({ accountId: account.id, permissionSet: 'account_admin', name: 'bench', tokenHash: hashToken(token), now: 0 });
  const api = (method: string, path: string, body?: unknown) =>
    fetch(base + path, { method, headers: { authorization: `Token ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });

  const subs: string[] = [];
  for (let i = 0; i < 10; i++) {
    const r = (await (await api('POST', `/api/v3/accounts/${account.id}/webhooks/subscriptions`, {
      name: `bench-${i}`, client_url: `http://127.0.0.1:${port}/hook/${i}`, event_types: ['job.run.completed'], active: true,
    })).json()) as { data: { id: string } };
    subs.push(r.data.id);
  }
  const t = toMicros(Date.now());
  const job: Job = { id: 1, accountId: account.id, name: 'bench', projectId: 1, environmentId: 1, projectName: 'p', environmentName: 'e',
    toolVersion: '2.0.0', executeSteps: [], createdAt: t };
  const run: Run = { id: 1, accountId: account.id, jobId: 1, status: 10, statusMessage: null, cause: 'bench', createdAt: t, startedAt: t, finishedAt: t, erroredAt: null };
  const sent = new Map<string, number>();
  const emit = async () => {
    const at = Date.now();
    const t0 = now();
    const evs = await store.enqueueEvent({
      accountId: account.id, jobId: 1, eventType: 'job.run.completed', now: toMicros(at), newEventId: () => eventId(at),
      payloadFor: (s, id) => buildPayload(s, id, 'job.run.completed', job, run, at),
    });
    for (const e of evs) sent.set(e.id, t0);
    svc.dispatcher.kick();
    return evs.length;
  };
  const waitArrivals = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (arrivedCount >= n) {
          onArrive = null;
          resolve();
        }
      };
      onArrive = check;
      check();
    });

  // 1. Throughput: 1,000 events x 10 subscriptions = 10,000 deliveries.
  const events = 1000;
  const tp0 = now();
  const cpu0 = process.cpuUsage();
  let expected = 0;
  for (let i = 0; i < events; i++) expected += await emit();
  await waitArrivals(expected);
  await svc.dispatcher.idle();
  const throughputS = (now() - tp0) / 1000;
  const perSecond = expected / throughputS;
  const cpu = process.cpuUsage(cpu0);
  // CPU time of this process (service and receiver thread) per delivery: a figure the machine's load does not distort.
  const cpuMsPerDelivery = (cpu.user + cpu.system) / 1000 / expected;

  // 2. Latency at a steady 200 events/s (one delivery per event: other subscriptions deactivated).
  for (const id of subs.slice(1)) await api('PUT', `/api/v3/accounts/${account.id}/webhooks/subscription/${id}`, { active: false });
  sent.clear();
  arrivals.clear();
  const before = arrivedCount;
  const rate = 200;
  const n = 1000;
  const start = now();
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await emit();
  }
  await waitArrivals(before + n);
  const lat = [...sent].map(([id, t0]) => (arrivals.get(id) ?? NaN) - t0).filter((x) => !Number.isNaN(x));

  // 3. API latency: list (10 subscriptions) and get.
  const timeIt = async (path: string, times: number) => {
    const xs: number[] = [];
    for (let i = 0; i < times; i++) {
      const t0 = now();
      const r = await api('GET', path);
      await r.arrayBuffer();
      xs.push(now() - t0);
    }
    return xs;
  };
  await timeIt(`/api/v3/accounts/${account.id}/webhooks/subscriptions`, 50);
  const list = await timeIt(`/api/v3/accounts/${account.id}/webhooks/subscriptions?limit=100`, 1000);
  const get = await timeIt(`/api/v3/accounts/${account.id}/webhooks/subscription/${subs[0]}`, 1000);

  await svc.close();
  await worker.terminate();
  rmSync(dir, { recursive: true, force: true });

  const figures = {
    deliveries_per_s: Math.round(perSecond),
    cpu_ms_per_delivery: Math.round(cpuMsPerDelivery * 1000) / 1000,
    event_to_first_attempt_p50_ms: pct(lat, 50),
    event_to_first_attempt_p99_ms: pct(lat, 99),
    list_p50_ms: pct(list, 50),
    list_p99_ms: pct(list, 99),
    get_p50_ms: pct(get, 50),
    get_p99_ms: pct(get, 99),
  };
  console.log('service (SQLite store, loopback receiver in a worker thread)');
  console.log(`  deliveries/s            ${figures.deliveries_per_s}  (${expected} deliveries in ${throughputS.toFixed(2)} s; target >= 1000)`);
  console.log(`  CPU per delivery        ${figures.cpu_ms_per_delivery} ms (service + receiver thread, all cores; ~${Math.round(1000 / figures.cpu_ms_per_delivery)}/s per busy core)`);
  console.log(`  event -> first attempt  p50 ${ms(figures.event_to_first_attempt_p50_ms)}  p99 ${ms(figures.event_to_first_attempt_p99_ms)}  at ${rate} events/s, ${lat.length} events (target p99 < 100 ms)`);
  console.log(`  GET list (10 subs)      p50 ${ms(figures.list_p50_ms)}  p99 ${ms(figures.list_p99_ms)}  (target p99 < 20 ms)`);
  console.log(`  GET subscription        p50 ${ms(figures.get_p50_ms)}  p99 ${ms(figures.get_p99_ms)}  (target p99 < 20 ms)`);
  return figures;
}

/** Busy and total CPU time of the whole machine so far, in clock ticks (/proc/stat's first line). */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - (f[4] ?? 0), total };
}

/** user + system CPU of a running process (and its finished children), from /proc/<pid>/stat. */
function processCpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return ((f[11]! + f[12]!) * 1000) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return 0;
  }
}

/**
 * PostgreSQL scale-out: 10,000 deliveries (1,000 events x 10 subscriptions) already in the outbox, then
 * 1, 2 or 3 `serve` processes (the built CLI) started on the database; the rate is measured from the
 * first to the last arrival at the receiver, so process start-up is not counted.
 */
export async function runPostgresScaleBench(baseUrl: string, processes: number[] = [1, 2, 3]): Promise<Record<string, number>> {
  const { PostgresStore } = await import('../src/service/store/postgres.js');
  const pg = (await import('pg')).default;
  const { spawn } = await import('node:child_process');
  const cli = new URL('../src/cli.js', import.meta.url).pathname;
  const out: Record<string, number> = {};
  for (const n of processes) {
    const name = `runlens_bench_${process.pid}_${n}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(baseUrl);
    u.pathname = `/${name}`;
    const url = u.toString();

    const worker = new Worker(RECEIVER, { eval: true });
    let count = 0;
    let first = 0;
    let last = 0;
    let done: (() => void) | null = null;
    const port = await new Promise<number>((resolve) => {
      worker.on('message', (m: { port?: number; t?: number }) => {
        if (m.port) return resolve(m.port);
        if (!count) first = m.t!;
        count++;
        last = m.t!;
        if (count >= 10_000) done?.();
      });
    });
    const store = await PostgresStore.connect(url, 4);
    const account = await store.createAccount('bench', toMicros(Date.now()));
    const t = toMicros(Date.now());
    for (let i = 0; i < 10; i++) {
      await store.insertSubscription({ id: `wsu_bench${i}`, accountId: account.id, name: `b${i}`, description: '', clientUrl: `http://127.0.0.1:${port}/hook/${i}`,
        active: true, archived: false, deactivateReason: null, eventTypes: ['job.run.completed'], jobIds: [], hmacSecret: 'secret', createdAt: t,
        updatedAt: t, dispatchedAt: null, httpStatusCode: 0, consecutiveFailures: 0, failingSince: null });
    }
    const job: Job = { id: 1, accountId: account.id, name: 'bench', projectId: 1, environmentId: 1, projectName: 'p', environmentName: 'e',
      toolVersion: '2.0.0', executeSteps: [], createdAt: t };
    const run: Run = { id: 1, accountId: account.id, jobId: 1, status: 10, statusMessage: null, cause: 'bench', createdAt: t, startedAt: t, finishedAt: t, erroredAt: null };
    for (let i = 0; i < 1000; i++) {
      const at = Date.now();
      await store.enqueueEvent({ accountId: account.id, jobId: 1, eventType: 'job.run.completed', now: toMicros(at), newEventId: () => eventId(at),
        payloadFor: (s, id) => buildPayload(s, id, 'job.run.completed', job, run, at) });
    }
    const finished = new Promise<void>((resolve) => (done = resolve));
    const cpuAtStart = machineCpu();
    const dir = mkdtempSync(join(tmpdir(), 'runlens-bench-pg-'));
    const children = Array.from({ length: n }, (_, i) =>
      spawn(process.execPath, [cli, 'serve', '--port', '0', '--database-url', url, '--data', join(dir, String(i)), '--allow-private-targets'], { stdio: 'ignore' }));
    await finished;
    const cpuAtEnd = machineCpu();
    const serveCpuMs = children.reduce((a, c) => a + processCpuMs(c.pid), 0);
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await store.close();
    await worker.terminate();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
    out[`postgres_${n}_process_deliveries_per_s`] = Math.round((count - 1) / ((last - first) / 1000));
    // Where the CPU went: the machine's busy cores over the run (serve + PostgreSQL + receiver + anything
    // else) and the serve processes' own CPU per delivery. With the cores saturated, more processes cannot help.
    const busyCores = (cpuAtEnd.busy - cpuAtStart.busy) / ((cpuAtEnd.total - cpuAtStart.total) / cpus().length);
    out[`postgres_${n}_machine_busy_cores`] = Math.round(busyCores * 100) / 100;
    out[`postgres_${n}_serve_cpu_ms_per_delivery`] = Math.round((serveCpuMs / 10_000) * 1000) / 1000;
    console.log(`  postgres, ${n} serve process${n > 1 ? 'es' : ''}: ${out[`postgres_${n}_process_deliveries_per_s`]} deliveries/s (10,000 deliveries); machine busy ${busyCores.toFixed(2)} of ${cpus().length} cores; serve CPU ${out[`postgres_${n}_serve_cpu_ms_per_delivery`]} ms/delivery`);
  }
  const one = out.postgres_1_process_deliveries_per_s;
  const three = out.postgres_3_process_deliveries_per_s;
  if (one && three) {
    console.log(`  scale-out: 3 processes deliver ${(three / one).toFixed(2)}x one process (goal >= 2x)`);
    const busy1 = out.postgres_1_machine_busy_cores!;
    if (busy1 > cpus().length * 0.75)
      console.log(`  (one process already kept ${busy1.toFixed(2)} of the machine's ${cpus().length} cores busy: the goal needs more cores than this machine has)`);
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const pgUrl = process.env.RUNLENS_BENCH_DATABASE_URL || process.env.RUNLENS_TEST_DATABASE_URL;
  runServiceBench()
    .then(async () => {
      if (pgUrl) await runPostgresScaleBench(pgUrl);
      else console.log('  postgres: skipped (set RUNLENS_BENCH_DATABASE_URL or RUNLENS_TEST_DATABASE_URL; see test/service/start-postgres.sh)');
    })
    .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
