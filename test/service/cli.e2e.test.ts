/**
 * End to end through the built CLI (`node dist/src/cli.js`): serve, accounts and tokens while it runs,
 * the webhooks client commands, the local listener, artifacts fetch, and a kill -9 in the middle of a
 * delivery. Build first: `npx tsc -p tsconfig.build.json` (npm test does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hmacHex } from '../../src/service/signing.js';
import { startReceiver, until } from './helpers.js';
import { CLI, runCli, runCliWithFileLimit } from '../helpers/cli.js';
import { LEGACY, ROOT, sample, samplesNote } from '../helpers/samples.js';

/** A Parquet file runlens's own producer wrote (samples/README.md). */
const PRODUCED_PARQUET = join(ROOT, 'samples', 'clean-build.parquet');

const children: ChildProcess[] = [];

function cli(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input, env: { ...process.env, RUNLENS_BASE_URL: '', RUNLENS_API_TOKEN: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts a long-running CLI command and resolves once it printed `pattern` on stderr. */
function start(args: string[], pattern: RegExp, o: { detached?: boolean } = {}): Promise<{ child: ChildProcess; match: RegExpMatchArray; lines: string[] }> {
  // detached: a process group of its own, as a terminal gives a command (Ctrl-C signals the whole group)
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: o.detached });
  children.push(child);
  const lines: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
  return new Promise((resolvePromise, reject) => {
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = err.match(pattern);
      if (m) resolvePromise({ child, match: m, lines });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)));
  });
}

describe('service CLI end to end', () => {
  let data: string;
  let base: string;
  let serve: ChildProcess;
  let conn: string[];
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const serveArgs = () => ['serve', '--port', '0', '--data', data, '--allow-private-targets', '--retry-delays', '0.05', '--delivery-timeout', '1', '--step-commands', 'node,runlens,cat'];

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -p tsconfig.build.json\` first`);
    data = mkdtempSync(join(tmpdir(), 'runlens-e2e-'));
    rx = await startReceiver();
    const s = await start(serveArgs(), /listening on (http:\/\/\S+)/);
    serve = s.child;
    base = s.match[1]!;
    const acct = JSON.parse(cli(['accounts', 'create', 'Acme', '--data', data, '--format', 'json']).stdout);
    const tok = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout);
    expect(tok.token).toMatch(/^rlt_/);
    conn = ['--base-url', base, '--account', String(acct.id), '--token', tok.token];
  });

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await rx?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('manages subscriptions with the webhooks commands and receives a run with `webhooks listen`', async () => {
    const created = cli(['webhooks', 'create', ...conn, '--name', 'e2e', '--url', 'https://example.com/x', '--event-types', 'job.run.started,job.run.completed', '--format', 'json']);
    expect(created.code, created.stderr).toBe(0);
    const sub = JSON.parse(created.stdout);
    expect(sub.hmac_secret).toBeTruthy();
    const table = cli(['webhooks', 'list', ...conn]);
    expect(table.stdout).toContain(sub.id);
    expect(table.stdout).toContain('active');

    const listener = await start(['webhooks', 'listen', '--port', '0', '--secret', sub.hmac_secret], /listen: (http:\/\/\S+)/);
    const upd = cli(['webhooks', 'update', sub.id, ...conn, '--url', listener.match[1]!, '--job-ids', '1', '--format', 'json']);
    expect(upd.code, upd.stderr).toBe(0);
    expect(JSON.parse(upd.stdout)).toMatchObject({ client_url: listener.match[1], job_ids: ['1'] });

    const test = cli(['webhooks', 'test', sub.id, ...conn]);
    expect(test.code, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/verification_status_code\t200/);

    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    const step = `node -e "const fs=require('fs');fs.mkdirSync(process.env.RUNLENS_TELEMETRY_DIR,{recursive:true});fs.copyFileSync(process.argv[1],process.env.RUNLENS_TELEMETRY_DIR+'/t.parquet')" ${JSON.stringify(PRODUCED_PARQUET)}`;
    const job = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'e2e job', project_id: 1, environment_id: 1, execute_steps: ['node -v', step] }) })).json() as any;
    expect(job.data.id).toBe(1);
    const run = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/1/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'e2e' }) })).json() as any;
    // the test delivery above carries placeholder ids (run 1 too): its event is not the run's
    const testEvent = /event_id\t(wev_\w+)/.exec(test.stdout)![1]!;
    const ofRun = () => listener.lines.filter((l) => l.includes(` run=${run.data.id} `) && !l.includes(testEvent));
    await until(async () => ofRun().some((l) => l.includes('job.run.completed')), 'completed event at the listener');
    expect(ofRun().map((l) => l.split(' ')[1])).toEqual(['job.run.started', 'job.run.completed']);
    expect(ofRun()[1]).toContain('status=Success');
    expect(listener.lines.join('\n')).not.toContain('not verified');

    const out = join(data, 'fetched.parquet');
    const fetched = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', out]);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stdout).toContain('(step 2)');
    expect(readFileSync(out)).toEqual(readFileSync(PRODUCED_PARQUET));
    const nested = join(data, 'no', 'such', 'folder', 'fetched.parquet');
    const intoNewFolder = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', nested]);
    expect(intoNewFolder.code, intoNewFolder.stderr).toBe(0);
    expect(readFileSync(nested)).toEqual(readFileSync(PRODUCED_PARQUET));
    const toStdout = spawnSync(process.execPath, [CLI, 'artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', '-'], { env: { ...process.env, RUNLENS_BASE_URL: '', RUNLENS_API_TOKEN: '' } });
    expect(toStdout.status, toStdout.stderr.toString()).toBe(0);
    expect(toStdout.stdout).toEqual(readFileSync(PRODUCED_PARQUET));
    const missing = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '--step', '1', '-o', out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/404/);

    const del = cli(['webhooks', 'delete', sub.id, ...conn]);
    expect(del.code).toBe(0);
    const gone = cli(['webhooks', 'get', sub.id, ...conn]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/404.*not found/);
  });

  it("free SQL in a runlens step reads the model, not the service's files (exit 2)", async () => {
    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    const secret = join(data, 'secret.txt');
    writeFileSync(secret, 'whsec-of-another-account\n');
    const steps = ['runlens generate -o g.jsonl --nodes 5', 'runlens query --sql "select count(*) as n from runs" g.jsonl',
      `runlens query --sql "select content from read_text('${secret}')" g.jsonl`];
    const job = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'sql', project_id: 1, environment_id: 1, execute_steps: steps }) })).json() as any;
    const run = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'sql' }) })).json() as any;
    const details = await until(async () => {
      const r = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/runs/${run.data.id}/?include_related=["run_steps"]`, { headers: auth })).json() as any;
      return r.data.is_complete ? r.data : null;
    }, 'run complete');
    expect(details.run_steps.map((s: any) => [s.status, s.exit_code]), JSON.stringify(details.run_steps)).toEqual([[10, 0], [10, 0], [20, 2]]);
    expect(details.run_steps[2].logs).toMatch(/runlens: SQL error: .*Permission Error.*in a job step, --sql reads only the model/);
    expect(details.run_steps[2].logs).not.toContain('whsec-of-another-account');
  });

  it('runlens record in a job step runs only a command the step check allows, checked on what it parsed (exit 2)', () => {
    const marker = join(data, 'record-ran');
    const r = runCli(['record', '-o', join(data, 'rec.jsonl'), '--', 'sh', '-c', `touch ${marker}`], { env: { RUNLENS_STEP_COMMANDS: 'runlens,dbt' } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/executable "sh" is not allowed/);
    expect(existsSync(marker)).toBe(false);
  });

  it("in a job step runlens writes only inside the step's working folder: outputs and --db elsewhere are exit 2, nothing written", () => {
    const home = join(data, 'step-home');
    const outside = join(data, 'outside');
    mkdirSync(home, { recursive: true });
    mkdirSync(outside, { recursive: true });
    const env = { RUNLENS_STEP_COMMANDS: 'runlens,dbt' };
    const clean = join(ROOT, 'samples', 'clean-build.jsonl');
    const refused: string[][] = [
      ['generate', '-o', '../outside/gen.jsonl'],
      ['generate', '-o', join(outside, 'gen.parquet'), '--format', 'parquet'],
      ['convert', clean, join(outside, 'c.parquet')],
      ['report', clean, '-o', join(outside, 'r.html')],
      ['load', clean, '--db', '../outside/m.duckdb'],
      ['migrate', sample(LEGACY, 'rr_v5_1.7.0_build.json'), '-o', join(outside, 'm.jsonl')],
    ];
    for (const args of refused) {
      const r = runCli(args, { env, cwd: home });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/a job step reads and writes only inside its run's folder/);
    }
    expect(readdirSync(outside)).toEqual([]);
    // nor is anything read from outside it: another run's telemetry, a model, a manifest, a link out
    const other = join(outside, 'other-run.jsonl');
    copyFileSync(clean, other);
    expect(runCli(['load', clean, '--db', join(outside, 'm.duckdb')]).code).toBe(0);
    symlinkSync(outside, join(home, 'link-out'));
    const reads: string[][] = [
      ['runs', other], ['query', '--sql', 'SELECT count(*) FROM records', '../outside'], ['validate', other], ['convert', other, 'c.parquet'],
      ['runs', 'link-out/other-run.jsonl'], ['gate', sample(LEGACY, 'rr_v5_1.7.0_build.json')], ['runs', '--db', join(outside, 'm.duckdb')],
      ['tree', sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl')],
    ];
    for (const args of reads) {
      const r = runCli(args, { env, cwd: home });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/a job step reads and writes only inside its run's folder/);
    }
    // a receive output outside makes no folder there
    const rc = runCli(['receive', '--port', '0', '--jsonl', '../outside/store.sqlite-journal/x.jsonl'], { env, cwd: home });
    expect(rc.code, rc.stderr).toBe(2);
    expect(readdirSync(outside).sort()).toEqual(['m.duckdb', 'other-run.jsonl']);
    // inside it, as without a step; the folder itself is a PATH to read, not a file to write
    const ok = runCli(['generate', '-o', 'sub/gen.jsonl'], { env, cwd: home });
    expect(ok.code, ok.stderr).toBe(0);
    expect(existsSync(join(home, 'sub', 'gen.jsonl'))).toBe(true);
    const fresh = join(data, 'step-fresh');
    mkdirSync(fresh);
    expect(runCli(['generate', '-o', 'logs/otel.jsonl'], { env, cwd: fresh }).code).toBe(0);
    for (const here of ['.', './']) {
      const r = runCli(['runs', here, '--format', 'json'], { env, cwd: fresh });
      expect(r.code, r.stderr).toBe(0);
    }
    expect(runCli(['report', '.', '-o', '.'], { env, cwd: fresh }).code).toBe(2);
    expect(existsSync(`${fresh}.lock`)).toBe(false);
    // outside a step, the same path is written
    expect(runCli(['generate', '-o', '../outside/gen.jsonl'], { cwd: home }).code).toBe(0);
  });

  it('a `runlens generate -o FILE.jsonl` step gets its JSONL converted into the Parquet artifact', async () => {
    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    const job = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'generate', project_id: 1, environment_id: 1, execute_steps: ['runlens generate -o gen.jsonl'] }) })).json() as any;
    const run = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'gen' }) })).json() as any;
    const details = await until(async () => {
      const r = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/runs/${run.data.id}/?include_related=["run_steps"]`, { headers: auth })).json() as any;
      return r.data.is_complete ? r.data : null;
    }, 'run complete');
    expect(details.run_steps[0], JSON.stringify(details.run_steps[0])).toMatchObject({ status: 10, telemetry_artifact: 'telemetry-1-otel.parquet' });
    const out = join(data, 'gen.parquet');
    const fetched = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '--step', '1', '-o', out]);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(readFileSync(out).subarray(0, 4).toString()).toBe('PAR1');
    expect(readFileSync(out).length).toBeGreaterThan(4096);
    // a file that cannot be written in full (too large, a full disk) is said, and leaves nothing
    const cut = join(data, 'cut', 'gen.parquet');
    const tooLarge = runCliWithFileLimit(4, ['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '--step', '1', '-o', cut]);
    expect(tooLarge.code, tooLarge.stderr).toBe(2);
    expect(tooLarge.stderr).toContain(`${cut}: not written (file too large)`);
    expect(tooLarge.stderr).not.toMatch(/internal error/);
    expect(readdirSync(join(data, 'cut'))).toEqual([]);
  });

  it('two `runlens generate -o otel.jsonl` steps: each artifact holds its own step\'s run', async () => {
    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    const steps = ['runlens generate -o otel.jsonl --nodes 8 --seed 11', 'runlens generate -o otel.jsonl --nodes 6 --seed 12'];
    const job = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'same-out', project_id: 1, environment_id: 1, execute_steps: steps }) })).json() as any;
    const run = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'gen' }) })).json() as any;
    await until(async () => {
      const r = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/runs/${run.data.id}/?include_related=["run_steps"]`, { headers: auth })).json() as any;
      return r.data.is_complete ? r.data : null;
    }, 'run complete');
    const out = join(data, 'same-out');
    // a new path without a trailing / names a file, which cannot hold two steps
    const plain = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', out]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`run ${run.data.id} has 2 steps with telemetry (1, 2): -o ${out} is a file; give a folder (one that exists, or a path ending in /) or --step K`);
    expect(existsSync(out)).toBe(false);
    const fetched = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', `${out}/`]);
    expect(fetched.code, fetched.stderr).toBe(0);
    const nodes = [1, 2].map((step) => JSON.parse(cli(['runs', join(out, `telemetry-${step}-otel.parquet`), '--format', 'json']).stdout).map((r: any) => r.nodes));
    expect(nodes).toEqual([[8], [6]]);
  });

  const legacy = samplesNote(LEGACY);
  it.skipIf(legacy.missing)(legacy.title('a `runlens record -o FILE` step writes FILE anew: a later step whose file starts with the same bytes has its whole file stored'), async () => {
    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    const [a, b] = [sample(LEGACY, 'log_1.8.2_postgres_run_model_error.jsonl'), sample(LEGACY, 'log_1.10.15_duckdb_singular_tests.jsonl')];
    const steps = [`runlens record -o r.jsonl -- cat ${a}`, `runlens record -o r.jsonl -- cat ${a} ${b}`];
    const job = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'rewrite', project_id: 1, environment_id: 1, execute_steps: steps }) })).json() as any;
    const run = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'rw' }) })).json() as any;
    const details = await until(async () => {
      const r = await (await fetch(`${base}/api/v2/accounts/${conn[3]}/runs/${run.data.id}/?include_related=["run_steps"]`, { headers: auth })).json() as any;
      return r.data.is_complete ? r.data : null;
    }, 'run complete');
    expect(details.run_steps.map((s: any) => s.telemetry_artifact)).toEqual(['telemetry-1-otel.parquet', 'telemetry-2-otel.parquet']);
    const out = join(data, 'rewrite');
    const fetched = cli(['artifacts', 'fetch', ...conn, '--run', String(run.data.id), '-o', `${out}/`]);
    expect(fetched.code, fetched.stderr).toBe(0);
    const runs = [1, 2].map((step) => JSON.parse(cli(['runs', join(out, `telemetry-${step}-otel.parquet`), '--format', 'json']).stdout).length);
    expect(runs).toEqual([1, 2]);
  });

  it('verify exits 0 for a matching signature and 1 for a wrong one', () => {
    const body = '{"eventId":"wev_x"}';
    const sig = hmacHex(body, 'sekrit');
    expect(cli(['webhooks', 'verify', '--secret', 'sekrit', '--signature', sig], body).code).toBe(0);
    const bad = cli(['webhooks', 'verify', '--secret', 'sekrit', '--signature', sig], body + ' ');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/does not match/);
    const f = join(data, 'body.json');
    writeFileSync(f, body);
    expect(cli(['webhooks', 'verify', '--secret', 'sekrit', '--signature', sig, '--file', f]).code).toBe(0);
  });

  it('client errors name what to fix (exit 2)', () => {
    const r = cli(['webhooks', 'create', ...conn, '--name', 'x', '--url', 'nope', '--event-types', 'job.run.started']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/client_url/);
    const t = cli(['webhooks', 'list', '--base-url', base, '--account', conn[3]!, '--token', 'wrong']);
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/401/);
  });

  it('serve refuses seconds a timer cannot hold (exit 2, naming the flag) rather than failing every delivery at once', () => {
    for (const flag of ['--delivery-timeout', '--claim-lease']) {
      const r = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--data', join(data, 'never'), flag, '2200000'], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${flag}: at most 2147483 seconds`);
      expect(r.stderr).not.toMatch(/listening|TimeoutOverflowWarning/);
    }
  });

  it('a second serve on the same data folder is refused (exit 2) and the first one keeps serving', async () => {
    // (a serve that started would run until the timeout)
    const r = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--data', data], { encoding: 'utf8', timeout: 20_000 });
    const second = { code: r.status, stderr: r.stderr };
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(/another runlens serve is using the data folder .*--database-url/);
    expect(second.stderr).not.toMatch(/listening/);
    const auth = { authorization: `Token ${conn[5]}` };
    expect((await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/`, { headers: auth })).status).toBe(200);
  });

  it('kill -9 in the middle of a delivery loses nothing: after restart the delivery goes out again', async () => {
    const created = JSON.parse(cli(['webhooks', 'create', ...conn, '--name', 'crash', '--url', `${rx.url}/hang-once`, '--event-types', 'job.run.completed', '--format', 'json']).stdout);
    rx.secrets.set(created.id, created.hmac_secret);
    const auth = { authorization: `Token ${conn[5]}`, 'content-type': 'application/json' };
    await fetch(`${base}/api/v2/accounts/${conn[3]}/jobs/1/run/`, { method: 'POST', headers: auth, body: JSON.stringify({ cause: 'crash test' }) });
    await rx.waitFor((d) => d.some((x) => x.path === '/hang-once'));
    serve.kill('SIGKILL');
    await new Promise((r) => serve.once('exit', r));
    const s = await start(serveArgs(), /listening on (http:\/\/\S+)/);
    serve = s.child;
    await rx.waitFor((d) => d.filter((x) => x.path === '/hang-once').length >= 2);
    const hits = rx.deliveries.filter((x) => x.path === '/hang-once');
    expect(hits[1]!.body).toBe(hits[0]!.body);
    expect(hits.every((x) => x.verified)).toBe(true);
    serve.kill('SIGTERM');
    await new Promise((r) => serve.once('exit', r));
  });
});

describe('serve on SIGTERM', () => {
  it('closes the API, says how many runs it waits for, and lets them finish', async () => {
    const data = mkdtempSync(join(tmpdir(), 'runlens-e2e-term-'));
    // the step says it started, then waits for a file the test writes once serve got SIGTERM
    const started = join(data, 'started');
    const go = join(data, 'go');
    let serve: ChildProcess | undefined;
    try {
      const s = await start(['serve', '--port', '0', '--data', data, '--step-commands', 'node'], /listening on (http:\/\/\S+)/);
      serve = s.child;
      const base = s.match[1]!;
      const acct = JSON.parse(cli(['accounts', 'create', 'Acme', '--data', data, '--format', 'json']).stdout);
      const tok = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout);
      const auth = { authorization: `Token ${tok.token}`, 'content-type': 'application/json' };
      const step = `node -e "const fs=require('fs');fs.writeFileSync(process.argv[1],'');const t=setInterval(()=>{if(fs.existsSync(process.argv[2]))clearInterval(t)},20)" ${started} ${go}`;
      const job = await (await fetch(`${base}/api/v2/accounts/${acct.id}/jobs/`, { method: 'POST', headers: auth,
        body: JSON.stringify({ name: 'slow', project_id: 1, environment_id: 1, execute_steps: [step] }) })).json() as any;
      const run = await (await fetch(`${base}/api/v2/accounts/${acct.id}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth,
        body: JSON.stringify({ cause: 'sigterm' }) })).json() as any;
      await until(async () => existsSync(started), 'the step to start');

      let stderr = '';
      s.child.stderr!.on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
      s.child.kill('SIGTERM');
      await until(async () => /stopping/.test(stderr), 'the stopping message');
      expect(stderr).toMatch(/waiting for 1 run in progress/);
      await until(async () => fetch(`${base}/api/v2/accounts/${acct.id}/jobs/`, { headers: auth }).then(() => false, () => true), 'the API to close');
      writeFileSync(go, '');
      expect(await exited).toBe(0);

      const { SqliteStore } = await import('../../src/service/store/sqlite.js');
      const store = new SqliteStore(data);
      try {
        expect((await store.getRun(acct.id, run.data.id))!).toMatchObject({ status: 10 });
      } finally {
        await store.close();
      }
    } finally {
      // a failed check must leave neither the step nor serve waiting
      writeFileSync(go, '');
      if (serve && serve.exitCode === null) {
        const gone = new Promise((r) => serve!.once('exit', r));
        serve.kill('SIGTERM');
        await gone;
      }
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe("serve's process group signalled, as Ctrl-C in its terminal does", () => {
  /** serve in a group of its own running one step that writes its pid to `started`, then waits for `go` (or forever). */
  async function serveWithStep(data: string, started: string, go: string) {
    const s = await start(['serve', '--port', '0', '--data', data, '--step-commands', 'node'], /listening on (http:\/\/\S+)/, { detached: true });
    const base = s.match[1]!;
    const acct = JSON.parse(cli(['accounts', 'create', 'Acme', '--data', data, '--format', 'json']).stdout);
    const tok = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout);
    const auth = { authorization: `Token ${tok.token}`, 'content-type': 'application/json' };
    const step = `node -e "const fs=require('fs');fs.writeFileSync(process.argv[1],String(process.pid));const t=setInterval(()=>{if(fs.existsSync(process.argv[2]))clearInterval(t)},20)" ${started} ${go}`;
    const job = await (await fetch(`${base}/api/v2/accounts/${acct.id}/jobs/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ name: 'slow', project_id: 1, environment_id: 1, execute_steps: [step] }) })).json() as any;
    const run = await (await fetch(`${base}/api/v2/accounts/${acct.id}/jobs/${job.data.id}/run/`, { method: 'POST', headers: auth,
      body: JSON.stringify({ cause: 'ctrl-c' }) })).json() as any;
    await until(async () => existsSync(started) && readFileSync(started, 'utf8') !== '', 'the step to start');
    let stderr = '';
    s.child.stderr!.on('data', (d: string) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => s.child.once('exit', (code, signal) => r({ code, signal })));
    return { serve: s.child, accountId: acct.id as number, runId: run.data.id as number, stderr: () => stderr, exited };
  }

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  async function runStatus(data: string, accountId: number, runId: number) {
    const { SqliteStore } = await import('../../src/service/store/sqlite.js');
    const store = new SqliteStore(data);
    try {
      return await store.getRun(accountId, runId);
    } finally {
      await store.close();
    }
  }

  it('lets the running step finish: the step is not in serve\'s group, and the run ends Success', async () => {
    const data = mkdtempSync(join(tmpdir(), 'runlens-e2e-int-'));
    const started = join(data, 'started');
    const go = join(data, 'go');
    let serve: ChildProcess | undefined;
    try {
      const s = await serveWithStep(data, started, go);
      serve = s.serve;
      process.kill(-serve.pid!, 'SIGINT');
      await until(async () => /waiting for 1 run in progress/.test(s.stderr()), 'the stopping message');
      expect(alive(Number(readFileSync(started, 'utf8')))).toBe(true);
      writeFileSync(go, '');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(await runStatus(data, s.accountId, s.runId)).toMatchObject({ status: 10 });
    } finally {
      writeFileSync(go, '');
      if (serve && serve.exitCode === null && serve.signalCode === null) {
        const gone = new Promise((r) => serve!.once('exit', r));
        serve.kill('SIGKILL');
        await gone;
      }
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('a second signal stops serve at once and the steps it runs with it', async () => {
    const data = mkdtempSync(join(tmpdir(), 'runlens-e2e-int2-'));
    const started = join(data, 'started');
    const never = join(data, 'never');
    let serve: ChildProcess | undefined;
    let pid = 0;
    try {
      const s = await serveWithStep(data, started, never);
      serve = s.serve;
      pid = Number(readFileSync(started, 'utf8'));
      process.kill(-serve.pid!, 'SIGINT');
      await until(async () => /a second signal stops at once/.test(s.stderr()), 'the stopping message');
      process.kill(-serve.pid!, 'SIGINT');
      expect(await s.exited).toEqual({ code: null, signal: 'SIGINT' });
      await until(async () => !alive(pid), 'the step to end');
    } finally {
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
      if (serve && serve.exitCode === null && serve.signalCode === null) {
        const gone = new Promise((r) => serve!.once('exit', r));
        serve.kill('SIGKILL');
        await gone;
      }
      rmSync(data, { recursive: true, force: true });
    }
  });
});
