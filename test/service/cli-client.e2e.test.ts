/**
 * The service's client commands end to end: the built CLI (`dist/src/cli.js`) against a real
 * `runlens serve` on 127.0.0.1 port 0 with a temporary --data folder. Accounts and tokens work on
 * that folder; jobs, runs, subscriptions and the delivery log go through the HTTP API with the
 * RUNLENS_* variables. Build first: `npm run build` (npm test does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { freePort, startReceiver, until } from './helpers.js';
import { CLI } from '../helpers/cli.js';
import { FUSION, sample, samplesNote } from '../helpers/samples.js';

const children: ChildProcess[] = [];
const ESC = '\u001b[';

/** The CLI with its output piped (not a terminal) and without NO_COLOR or CI, so only the pipe decides colour. */
function cli(args: string[], env: Record<string, string> = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['NO_COLOR', 'FORCE_COLOR', 'CI'].includes(k) && !k.startsWith('RUNLENS_')));
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...base, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI run asynchronously (several at once, or while this process serves a proxy it talks to). */
function run(args: string[], env?: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['NO_COLOR', 'FORCE_COLOR', 'CI'].includes(k) && !k.startsWith('RUNLENS_')));
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', ...(env ? { env: { ...base, ...env } } : {}) }, (err, stdout, stderr) =>
      resolvePromise({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

function start(args: string[], pattern: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  return new Promise((resolvePromise, reject) => {
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = err.match(pattern);
      if (m) resolvePromise({ child, match: m });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)));
  });
}

/** An HTTP server on 127.0.0.1 port 0, and its base URL. */
async function httpServer(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createHttpServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

const closeServer = (s: Server) => new Promise((r) => s.close(r));

describe('service client commands end to end', () => {
  let data: string;
  let env: Record<string, string>;
  let accountId: string;

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    data = mkdtempSync(join(tmpdir(), 'runlens-client-e2e-'));
    const s = await start(['serve', '--port', '0', '--data', data, '--allow-private-targets', '--retry-delays', '0.05',
      '--delivery-timeout', '1', '--step-commands', 'node,runlens'], /listening on (http:\/\/\S+)/);
    const acct = JSON.parse(cli(['accounts', 'create', 'Acme', '--data', data, '--format', 'json']).stdout);
    accountId = String(acct.id);
    const tok = JSON.parse(cli(['tokens', 'create', '--account', accountId, '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout);
    env = { RUNLENS_BASE_URL: s.match[1]!, RUNLENS_ACCOUNT_ID: accountId, RUNLENS_API_TOKEN: tok.token };
  });

  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(data, { recursive: true, force: true });
  });

  describe('client output', () => {
    it('prints tables without ANSI codes when stdout is not a terminal', () => {
      const made = cli(['webhooks', 'create', '--name', 'plain', '--url', 'https://example.com/plain', '--event-types', 'job.run.completed', '--job-ids', '4,2'], env);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).not.toContain(ESC);
      const list = cli(['webhooks', 'list'], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain('plain');
      expect(list.stdout).not.toContain(ESC);
    });

    it.skipIf(spawnSync('script', ['--version']).status !== 0)('colours table headers in a terminal, unless NO_COLOR is set', () => {
      // script(1) gives the CLI a pseudo-terminal as stdout.
      const inTerminal = (extra: Record<string, string>) => spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} accounts list --data ${JSON.stringify(data)}`, '/dev/null'],
        { encoding: 'utf8', env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !['NO_COLOR', 'FORCE_COLOR', 'CI'].includes(k))), ...extra } }).stdout;
      const coloured = inTerminal({});
      expect(coloured).toContain('Acme');
      expect(coloured).toContain(ESC);
      const plain = inTerminal({ NO_COLOR: '1' });
      expect(plain).toContain('Acme');
      expect(plain).not.toContain(ESC);
    });

    it('`get --format json` prints one object with the API\'s own types (job_ids as strings)', () => {
      const made = JSON.parse(cli(['webhooks', 'create', '--name', 'typed', '--url', 'https://example.com/t', '--event-types', 'job.run.started',
        '--job-ids', '7', '--format', 'json'], env).stdout);
      expect(made).toMatchObject({ name: 'typed', job_ids: ['7'], account_id: accountId });
      expect(made.hmac_secret).toBeTruthy();
      const got = cli(['webhooks', 'get', made.id, '--format', 'json'], env);
      expect(got.code, got.stderr).toBe(0);
      const obj = JSON.parse(got.stdout);
      expect(Array.isArray(obj)).toBe(false);
      expect(obj).toMatchObject({ id: made.id, job_ids: ['7'], http_status_code: '0', active: true });
      const upd = JSON.parse(cli(['webhooks', 'update', made.id, '--job-ids', '8,9', '--format', 'json'], env).stdout);
      expect(upd).toMatchObject({ id: made.id, job_ids: ['8', '9'] });
    });

    it('list --offset N without --limit lists every item from N on (jobs and webhooks)', () => {
      for (const n of ['a', 'b']) {
        expect(cli(['webhooks', 'create', '--name', `paged-${n}`, '--url', `https://example.com/${n}`, '--event-types', 'job.run.completed'], env).code).toBe(0);
        expect(cli(['jobs', 'create', '--name', `paged-${n}`, '--step', 'node -v'], env).code).toBe(0);
      }
      for (const what of ['webhooks', 'jobs']) {
        const ids = (args: string[]) => {
          const r = cli([what, 'list', ...args, '--format', 'json'], env);
          expect(r.code, `${what} ${args.join(' ')}: ${r.stderr}`).toBe(0);
          return (JSON.parse(r.stdout) as { id: string | number }[]).map((x) => x.id);
        };
        const all = ids([]);
        expect(all.length, what).toBeGreaterThanOrEqual(2);
        expect(ids(['--offset', '1']), what).toEqual(all.slice(1));
        expect(ids(['--offset', String(all.length)]), what).toEqual([]);
        expect(ids(['--offset', '1', '--limit', '1']), what).toEqual(all.slice(1, 2));
      }
    });

    it('uses the same field names in text and JSON', () => {
      const text = cli(['tokens', 'create', '--account', accountId, '--permission-set', 'analyst', '--data', data]);
      expect(text.code, text.stderr).toBe(0);
      const json = JSON.parse(cli(['tokens', 'create', '--account', accountId, '--permission-set', 'analyst', '--data', data, '--format', 'json']).stdout);
      const textKeys = text.stdout.trim().split('\n').map((l) => l.split('\t')[0]);
      expect(textKeys).toEqual(Object.keys(json));
      const acctText = cli(['accounts', 'create', 'Fields', '--data', data]);
      const acctJson = JSON.parse(cli(['accounts', 'create', 'Fields2', '--data', data, '--format', 'json']).stdout);
      expect(acctText.stdout.trim().split('\n').map((l) => l.split('\t')[0])).toEqual(Object.keys(acctJson));
    });

    it('names the request, status and message of an API error (exit 2), and an unreachable service', async () => {
      const r = cli(['webhooks', 'get', 'wsu_nothere'], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`GET ${env.RUNLENS_BASE_URL}/api/v3/accounts/${accountId}/webhooks/subscription/wsu_nothere: 404 not found: `);
      expect(r.stderr).toMatch(/not found/);
      const closed = await freePort();
      const down = cli(['webhooks', 'list'], { ...env, RUNLENS_BASE_URL: `http://127.0.0.1:${closed}` });
      expect(down.code).toBe(2);
      expect(down.stderr).toMatch(new RegExp(`^runlens: GET http://127\\.0\\.0\\.1:${closed}/api/v3/accounts/\\d+/webhooks/subscriptions\\S*: cannot reach the service: .*ECONNREFUSED`));
    });
  });

  describe('jobs', () => {
    it('create, list, get and delete, in text and JSON', () => {
      const made = cli(['jobs', 'create', '--name', 'two steps', '--step', 'node -v', '--step', 'node -e "console.log(1)"', '--format', 'json'], env);
      expect(made.code, made.stderr).toBe(0);
      const job = JSON.parse(made.stdout);
      expect(job).toMatchObject({ name: 'two steps', execute_steps: ['node -v', 'node -e "console.log(1)"'], project_id: 1, environment_id: 1, state: 1 });
      const text = cli(['jobs', 'get', String(job.id)], env);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(`id\t${job.id}\nname\ttwo steps\nexecute_steps\t["node -v","node -e \\"console.log(1)\\""]\n`);
      expect(JSON.parse(cli(['jobs', 'get', String(job.id), '--format', 'json'], env).stdout)).toEqual(job);

      const listed = cli(['jobs', 'list'], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^ *${job.id} {2,}two steps {2,}`, 'm'));
      expect(JSON.parse(cli(['jobs', 'list', '--format', 'json'], env).stdout).map((j: any) => j.id)).toContain(job.id);

      const del = cli(['jobs', 'delete', String(job.id)], env);
      expect(del.code, del.stderr).toBe(0);
      expect(del.stdout).toBe(`deleted job ${job.id} (two steps)\n`);
      expect(JSON.parse(cli(['jobs', 'list', '--format', 'json'], env).stdout).map((j: any) => j.id)).not.toContain(job.id);
      const gone = cli(['jobs', 'get', String(job.id)], env);
      expect(gone.code).toBe(2);
      expect(gone.stderr).toContain(`GET ${env.RUNLENS_BASE_URL}/api/v2/accounts/${accountId}/jobs/${job.id}/: 404 not found: `);
      expect(gone.stderr).toContain('(job not found)');
    });

    it('refuses a step the service would not run, naming it (exit 2)', () => {
      const r = cli(['jobs', 'create', '--name', 'bad', '--step', 'node -v', '--step', 'bash -c true'], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/POST .*\/jobs\/: 400 bad request: .*execute_steps\[1\]/);
    });

    it('`run --wait` exits 0 when the run succeeded and 1 when it errored; runs and run-status show them', () => {
      const ok = JSON.parse(cli(['jobs', 'create', '--name', 'ok', '--step', 'node -e "console.log(\'hello from step 1\')"', '--format', 'json'], env).stdout);
      const bad = JSON.parse(cli(['jobs', 'create', '--name', 'bad', '--step', 'node -v', '--step', 'node -e "process.exit(3)"', '--format', 'json'], env).stdout);

      const good = cli(['jobs', 'run', String(ok.id), '--wait', '--interval', '0.1', '--cause', 'e2e ok'], env);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toMatch(/^id\t\d+\njob_id\t\d+\nstatus_humanized\tSuccess\n/);
      expect(good.stdout).toContain('trigger.cause\te2e ok\n');
      expect(good.stdout).toMatch(/^ *1 {2,}node -e "console.log\('hello from step 1'\)" {2,}Success +0 /m);
      expect(good.stderr).toMatch(/run \d+: Success\n$/);
      const goodId = Number(/^id\t(\d+)/.exec(good.stdout)![1]);

      const failed = cli(['jobs', 'run', String(bad.id), '--wait', '--interval', '0.1', '--format', 'json'], env);
      expect(failed.code).toBe(1);
      const run = JSON.parse(failed.stdout);
      expect(run).toMatchObject({ job_id: bad.id, status: 20, status_humanized: 'Errored', is_complete: true });
      expect(run.finished_at).toBeTruthy();
      expect(run.run_steps.map((x: any) => [x.index, x.status_humanized, x.exit_code])).toEqual([[1, 'Success', 0], [2, 'Errored', 3]]);
      expect(failed.stderr).toContain(`runlens: run ${run.id} Errored: step 2 (node -e "process.exit(3)") exited with 3`);

      const started = cli(['jobs', 'run', String(ok.id), '--format', 'json'], env);
      expect(started.code, started.stderr).toBe(0);
      const queued = JSON.parse(started.stdout);
      expect(queued).toMatchObject({ job_id: ok.id, trigger: { cause: 'Triggered by runlens jobs run' } });
      cli(['jobs', 'run-status', String(queued.id)], env);

      const runs = cli(['jobs', 'runs', String(ok.id), '--format', 'json'], env);
      expect(runs.code, runs.stderr).toBe(0);
      expect(JSON.parse(runs.stdout).map((r: any) => r.id)).toEqual([queued.id, goodId]);
      const table = cli(['jobs', 'runs', String(ok.id), '--limit', '1'], env);
      expect(table.stdout).toMatch(new RegExp(`^ *${queued.id} {2,}`, 'm'));
      expect(table.stdout).not.toMatch(new RegExp(`^ *${goodId} {2,}`, 'm'));
      expect(table.stderr).toBe('1 of 2 runs shown, from offset 0; see --limit and --offset\n');

      const status = cli(['jobs', 'run-status', String(run.id), '--logs'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('status_message\tstep 2 (node -e "process.exit(3)") exited with 3\n');
      expect(status.stdout).toMatch(/--- step 1: node -v \(Success\)\nv\d+\./);
      expect(JSON.parse(cli(['jobs', 'run-status', String(run.id), '--format', 'json'], env).stdout)).toMatchObject({ id: run.id, run_steps: [{ index: 1 }, { index: 2 }] });
    });

    const jsonlNote = samplesNote(FUSION);
    it.skipIf(jsonlNote.missing)(jsonlNote.title("artifacts fetch says when a step's telemetry was not stored, why, and where its log is (exit 2)"), () => {
      // a real sample whose last line is cut short: the step writes it, the service cannot convert it
      const cut = `node -e "const fs=require('fs');const t=fs.readFileSync(process.argv[1],'utf8').trimEnd();fs.writeFileSync(process.env.RUNLENS_TELEMETRY_DIR+'/run.jsonl',t.slice(0,-20))" ${JSON.stringify(sample(FUSION, 'forwarder-otel-preview72.jsonl'))}`;
      const job = JSON.parse(cli(['jobs', 'create', '--name', 'cut', '--step', 'node -v', '--step', cut, '--format', 'json'], env).stdout);
      const ran = cli(['jobs', 'run', String(job.id), '--wait', '--interval', '0.1', '--format', 'json'], env);
      expect(ran.code, ran.stderr).toBe(0);
      const run = JSON.parse(ran.stdout);
      expect(run.run_steps.map((x: any) => x.telemetry_artifact)).toEqual([null, null]);
      const out = join(data, 'cut.parquet');
      const r = cli(['artifacts', 'fetch', '--run', String(run.id), '-o', out], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`run ${run.id}: the telemetry step 2 wrote was not stored \\(.*run\\.jsonl.*\\); \`runlens jobs run-status ${run.id} --logs\` shows the step's log`));
      expect(r.stderr).not.toContain('no step with telemetry');
      expect(existsSync(out)).toBe(false);
    });

    it('checks ids and limits before any request (exit 2)', () => {
      for (const [args, msg] of [
        [['jobs', 'get', 'x1'], 'JOB: expected a job id'],
        [['jobs', 'run-status', '0'], 'RUN: expected a run id'],
        [['jobs', 'get', '9007199254740993'], 'JOB: expected a job id'],
        [['artifacts', 'fetch', '--run', '9007199254740993', '-o', '-'], '--run: expected a run id'],
        [['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', 'a.jsonl'], '-o a.jsonl: the telemetry artifacts are Parquet'],
        [['artifacts', 'fetch', '--run', '7', '-o', 'a.jsonl.gz'], '-o a.jsonl.gz: the telemetry artifacts are Parquet'],
        [['webhooks', 'update', 'wsu_x', '--job-ids', '4,9007199254740993'], '--job-ids: "9007199254740993" is not'],
        [['jobs', 'runs', '1', '--limit', '500'], '--limit: expected an integer from 1 to 100'],
        [['jobs', 'run', '1', '--wait', '--interval', '0'], '--interval: expected a positive number of seconds'],
        [['jobs', 'run', '1', '--wait', '--interval', '2200000'], '--interval: at most 2147483 seconds'],
        [['jobs', 'run', '1', '--wait', '--timeout', '2200000'], '--timeout: at most 2147483 seconds'],
        [['artifacts', 'fetch', '--run', '7', '-o', '-', '--timeout', '0'], '--timeout: expected a positive number of seconds'],
        [['webhooks', 'events', 'wsu_x', '--limit', '0'], '--limit: expected an integer from 1 to 100'],
        [['webhooks', 'list', '--offset', '-1'], '--offset: expected an integer from 0'],
        [['jobs', 'list', '--offset', '1.5'], '--offset: expected an integer from 0'],
      ] as const) {
        const r = cli([...args], env);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toContain(msg);
      }
      const noEnv = cli(['jobs', 'list']);
      expect(noEnv.code).toBe(2);
      expect(noEnv.stderr).toContain('missing --base-url (or RUNLENS_BASE_URL), --account (or RUNLENS_ACCOUNT_ID), --token (or RUNLENS_API_TOKEN)');
    });
  });

  describe('the delivery log', () => {
    it('`webhooks events` lists what was sent and `webhooks receipt` every attempt, by event id alone', async () => {
      const rx = await startReceiver();
      try {
        const sub = JSON.parse(cli(['webhooks', 'create', '--name', 'log', '--url', `${rx.url}/fail`, '--event-types', 'job.run.completed', '--format', 'json'], env).stdout);
        rx.secrets.set(sub.id, sub.hmac_secret);
        const job = JSON.parse(cli(['jobs', 'create', '--name', 'logged', '--step', 'node -v', '--format', 'json'], env).stdout);
        expect(cli(['jobs', 'run', String(job.id), '--wait', '--interval', '0.1'], env).code).toBe(0);
        await rx.waitFor((d) => d.filter((x) => x.path === '/fail').length >= 5, '5 attempts');
        let events: any[] = [];
        await until(async () => {
          events = JSON.parse(cli(['webhooks', 'events', sub.id, '--format', 'json'], env).stdout);
          return events[0]?.status === 'failed';
        }, 'the event to have failed', 300);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ subscription_id: sub.id, trigger_event_type: 'job.run.completed', job_id: String(job.id), attempts: 5, http_status_code: '500' });
        const table = cli(['webhooks', 'events', sub.id], env);
        expect(table.stdout).toMatch(new RegExp(`^${events[0].id} {2,}job\\.run\\.completed +${job.id} +failed +5 +500 `, 'm'));

        const receipt = cli(['webhooks', 'receipt', events[0].id], env);
        expect(receipt.code, receipt.stderr).toBe(0);
        expect(receipt.stdout).toMatch(new RegExp(`^id\\t${events[0].id}\\nsubscription_id\\t${sub.id}\\ntrigger_event_type\\tjob\\.run\\.completed\\n`));
        for (let i = 1; i <= 5; i++) expect(receipt.stdout).toMatch(new RegExp(`^ *${i} {2,}\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +500 +[\\d.]+ {2,}.*500.* {2,}boom`, 'm'));
        const json = JSON.parse(cli(['webhooks', 'receipt', events[0].id, '--format', 'json'], env).stdout);
        expect(json.map((r: any) => r.attempt)).toEqual([1, 2, 3, 4, 5]);
        expect(json[0]).toMatchObject({ event_id: events[0].id, subscription_id: sub.id, http_status_code: '500', response_body: 'boom' });
        expect(JSON.parse(json[0].request_body)).toMatchObject({ eventType: 'job.run.completed', data: { jobId: String(job.id) } });
        const direct = cli(['webhooks', 'receipt', events[0].id, '--subscription', sub.id, '--format', 'json'], env);
        expect(JSON.parse(direct.stdout)).toEqual(json);

        const missing = cli(['webhooks', 'receipt', 'wev_nothere'], env);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toContain(`GET ${env.RUNLENS_BASE_URL}/api/v3/accounts/${accountId}/webhooks/event/wev_nothere: 404 not found`);
      } finally {
        await rx.close();
      }
    });
  });

  describe('accounts and tokens (on the data folder)', () => {
    it('lists accounts, lists tokens without the token, and a revoked token gets 401', () => {
      const acct = JSON.parse(cli(['accounts', 'create', 'Listed', '--data', data, '--format', 'json']).stdout);
      const accounts = cli(['accounts', 'list', '--data', data, '--format', 'json']);
      expect(accounts.code, accounts.stderr).toBe(0);
      expect(JSON.parse(accounts.stdout).find((a: any) => a.id === acct.id)).toEqual(acct);
      expect(cli(['accounts', 'list', '--data', data]).stdout).toMatch(new RegExp(`^ *${acct.id} {2,}act_\\w+ {2,}Listed {2,}`, 'm'));

      const made = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'job_runner', '--name', 'ci', '--data', data, '--format', 'json']).stdout);
      const list = cli(['tokens', 'list', '--account', String(acct.id), '--data', data, '--format', 'json']);
      expect(list.code, list.stderr).toBe(0);
      const { token, ...shown } = made;
      expect(JSON.parse(list.stdout)).toEqual([shown]);
      const text = cli(['tokens', 'list', '--account', String(acct.id), '--data', data]);
      expect(text.stdout).toMatch(new RegExp(`^ *${made.id} {2,}${acct.id} {2,}job_runner {2,}ci {2,}`, 'm'));
      for (const out of [list.stdout, text.stdout, cli(['tokens', 'list', '--data', data]).stdout]) expect(out).not.toContain(token);

      const asIt = { RUNLENS_BASE_URL: env.RUNLENS_BASE_URL!, RUNLENS_ACCOUNT_ID: String(acct.id), RUNLENS_API_TOKEN: token };
      expect(cli(['jobs', 'list'], asIt).code).toBe(0);
      const revoked = cli(['tokens', 'revoke', String(made.id), '--data', data]);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toBe(`revoked token ${made.id} (account ${acct.id}, job_runner, "ci")\n`);
      const refused = cli(['jobs', 'list'], asIt);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/401 unauthorized: Invalid token/);
      const again = cli(['tokens', 'revoke', String(made.id), '--data', data]);
      expect(again.code).toBe(2);
      expect(again.stderr).toContain(`tokens revoke: no token ${made.id} in ${data}`);
      expect(JSON.parse(cli(['tokens', 'list', '--account', String(acct.id), '--data', data, '--format', 'json']).stdout)).toEqual([]);
    });

    it('takes account and token ids only in their canonical form, as the API does: 01 is not 1 (exit 2)', () => {
      for (const [args, msg] of [
        [['tokens', 'create', '--account', '01', '--permission-set', 'developer'], '--account: expected an account id (1, 2, ...'],
        [['tokens', 'create', '--account', '1.0', '--permission-set', 'developer'], '--account: expected an account id (1, 2, ...'],
        [['tokens', 'list', '--account', '+1'], '--account: expected an account id (1, 2, ...'],
        [['tokens', 'revoke', '01'], 'ID: expected a token id (1, 2, ...'],
      ] as const) {
        const r = cli([...args, '--data', data]);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr, args.join(' ')).toContain(msg);
        expect(r.stdout, args.join(' ')).toBe('');
      }
    });
  });

  describe('what the client must not get wrong', () => {
    /** Passes a request on to the service and its answer back. */
    async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const r = await fetch(env.RUNLENS_BASE_URL + req.url!, { method: req.method, redirect: 'manual', body: chunks.length ? Buffer.concat(chunks) : undefined,
        headers: { authorization: req.headers.authorization!, ...(req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {}) } });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer()));
    }

    /** A request for a listing page after the first (the first is at offset 0). */
    const laterPage = (url: string) => /[?&]offset=(?!0&|0$)\d/.test(url);

    it('does not follow redirects: a 302 to a POST fails naming the request, status and Location, and creates nothing (exit 2)', async () => {
      const job = JSON.parse(cli(['jobs', 'create', '--name', 'behind a redirect', '--step', 'node -v', '--format', 'json'], env).stdout);
      // A proxy that moved the API from /old to / on the same origin: followed, a POST would come back as a GET of the listing.
      const seen: string[] = [];
      const proxy = await httpServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url!.startsWith('/old/')) res.writeHead(302, { location: req.url!.slice('/old'.length) }).end();
        else void forward(req, res);
      });
      try {
        const redirected = { ...env, RUNLENS_BASE_URL: `${proxy.url}/old` };
        const made = await run(['webhooks', 'create', '--name', 'redirected', '--url', 'https://example.com/r', '--event-types', 'job.run.completed'], redirected);
        const subs = `/api/v3/accounts/${accountId}/webhooks/subscriptions`;
        expect(made.stderr).toContain(`POST ${proxy.url}/old${subs}: 302 found: redirected to ${proxy.url}${subs}`);
        expect(made.code).toBe(2);
        expect(made.stdout).toBe('');
        const ran = await run(['jobs', 'run', String(job.id)], redirected);
        const trigger = `/api/v2/accounts/${accountId}/jobs/${job.id}/run/`;
        expect(ran.stderr).toContain(`POST ${proxy.url}/old${trigger}: 302 found: redirected to ${proxy.url}${trigger}`);
        expect(ran.code).toBe(2);
        expect(seen).toEqual([`POST /old${subs}`, `POST /old${trigger}`]);
      } finally {
        await closeServer(proxy.server);
      }
      expect(JSON.parse(cli(['webhooks', 'list', '--format', 'json'], env).stdout).map((s: any) => s.name)).not.toContain('redirected');
      expect(JSON.parse(cli(['jobs', 'runs', String(job.id), '--format', 'json'], env).stdout)).toEqual([]);
    });

    it('a download cut short is exit 2 naming the artifact, and writes no file', async () => {
      const cut = await httpServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000' }).write('PAR1 and then nothing');
        setTimeout(() => res.destroy(), 20);
      });
      try {
        const out = join(mkdtempSync(join(tmpdir(), 'runlens-cut-')), 'run.parquet');
        const r = await run(['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', out], { ...env, RUNLENS_BASE_URL: cut.url });
        expect(r.code).toBe(2);
        expect(r.stderr).not.toContain('internal error');
        expect(r.stderr).toMatch(/telemetry-1-otel\.parquet.*cut short/);
        expect(existsSync(out)).toBe(false);
      } finally {
        await closeServer(cut.server);
      }
    });

    it("a 2xx answer that is not the API's JSON envelope is exit 2 naming the request, never an internal error", async () => {
      let body = '';
      const fake = await httpServer((_req, res) => res.writeHead(200, { 'content-type': body.startsWith('<') ? 'text/html' : 'application/json' }).end(body));
      try {
        const at = { ...env, RUNLENS_BASE_URL: fake.url };
        const v3 = `${fake.url}/api/v3/accounts/${accountId}/webhooks`;
        const v2 = `${fake.url}/api/v2/accounts/${accountId}`;
        const cases: [string, string[], string][] = [
          ['<!doctype html><p>app</p>', ['webhooks', 'list'], `GET ${v3}/subscriptions?offset=0&limit=100: not the API's answer: not JSON (content-type text/html, begins "<!doctype html><p>app</p>")`],
          ['<!doctype html><p>app</p>', ['webhooks', 'get', 'wsu_x'], `GET ${v3}/subscription/wsu_x: not the API's answer: not JSON`],
          ['<!doctype html><p>app</p>', ['webhooks', 'delete', 'wsu_x'], `DELETE ${v3}/subscription/wsu_x: not the API's answer: not JSON`],
          ['<!doctype html><p>app</p>', ['webhooks', 'update', 'wsu_x', '--name', 'n'], `GET ${v3}/subscription/wsu_x: not the API's answer: not JSON`],
          ['<!doctype html><p>app</p>', ['jobs', 'run', '1'], `POST ${v2}/jobs/1/run/: not the API's answer: not JSON`],
          ['<!doctype html><p>app</p>', ['artifacts', 'fetch', '--run', '7', '-o', '-'], `GET ${v2}/runs/7/?include_related=`],
          ['{}', ['webhooks', 'get', 'wsu_x'], `GET ${v3}/subscription/wsu_x: not the API's answer: no "data" in it (content-type application/json, begins "{}")`],
          ['{"data":null}', ['webhooks', 'get', 'wsu_x'], `GET ${v3}/subscription/wsu_x: not the API's answer: no "data" in it`],
          ['{}', ['webhooks', 'list'], `GET ${v3}/subscriptions?offset=0&limit=100: not the API's answer: no "data" list in it`],
          ['{"data":{"id":1}}', ['jobs', 'list'], `GET ${v2}/jobs/?offset=0&limit=100: not the API's answer: no "data" list in it`],
          ['{"data":null}', ['jobs', 'get', '1'], `GET ${v2}/jobs/1/: not the API's answer: no "data" in it`],
        ];
        for (const [answer, args, msg] of cases) {
          body = answer;
          const r = await run(args, at);
          expect(r.code, `${args.join(' ')} <- ${answer}`).toBe(2);
          expect(r.stderr, `${args.join(' ')} <- ${answer}`).toContain(msg);
          expect(r.stderr).not.toContain('internal error');
          expect(r.stdout, `${args.join(' ')} <- ${answer}`).toBe('');
        }
      } finally {
        await closeServer(fake.server);
      }
    });

    it('an answer that is not Parquet (a web page at a wrong --base-url) is exit 2 naming the request, and writes no file', async () => {
      const page = await httpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body>app</body></html>'));
      try {
        const out = join(mkdtempSync(join(tmpdir(), 'runlens-page-')), 'run.parquet');
        const r = await run(['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', out], { ...env, RUNLENS_BASE_URL: page.url });
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`GET ${page.url}/api/v2/accounts/${accountId}/runs/7/artifacts/metadata/telemetry-1-otel.parquet?step=1: `
          + 'not a Parquet file (content-type text/html, begins "<!doctype html><html><body>app</…")');
        expect(existsSync(out)).toBe(false);
      } finally {
        await closeServer(page.server);
      }
    });

    it("an artifact the service sent that is not Parquet is exit 2 saying so, without blaming --base-url", async () => {
      const bad = await httpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename="telemetry-1-otel.parquet"' }).end('PAR1 and the rest cut off'));
      try {
        const out = join(mkdtempSync(join(tmpdir(), 'runlens-cutoff-')), 'run.parquet');
        const r = await run(['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', out], { ...env, RUNLENS_BASE_URL: bad.url });
        expect(r.code).toBe(2);
        expect(r.stderr).toContain('telemetry-1-otel.parquet of run 7 as the service sent it is not a Parquet file (content-type application/octet-stream, begins "PAR1 and the rest cut off")');
        expect(r.stderr).not.toContain('--base-url');
        expect(existsSync(out)).toBe(false);
      } finally {
        await closeServer(bad.server);
      }
    });

    describe('a service that accepts the connection and never answers', () => {
      /** Answers the trigger POST with a Running run 5; leaves every GET without an answer (`stall`: sends the headers and a little of the body, then nothing). */
      async function silentService(stall = false) {
        const svc = await httpServer((req, res) => {
          if (req.method === 'POST') {
            return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: { code: 200, is_success: true },
              data: { id: 5, job_id: 1, status: 3, status_humanized: 'Running', is_complete: false, finished_at: null } }));
          }
          if (stall) res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1000' }).write('PAR1');
        });
        return { ...svc, close: () => { svc.server.closeAllConnections(); return closeServer(svc.server); } };
      }

      it('`jobs run --wait --timeout 2` gives up (exit 2) saying the service did not answer', async () => {
        const svc = await silentService();
        try {
          const r = await run(['jobs', 'run', '1', '--wait', '--timeout', '2'], { ...env, RUNLENS_BASE_URL: svc.url });
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain(`run 5: the service did not answer GET ${svc.url}/api/v2/accounts/${accountId}/runs/5/?include_related=`);
          expect(r.stderr).toContain('before --timeout 2 s ran out');
          expect(r.stderr).not.toContain('cannot reach the service');
        } finally {
          await svc.close();
        }
      }, 30_000);

      it('`artifacts fetch --timeout 1` gives up (exit 2) on an answer that does not come or stops coming, and writes no file', async () => {
        for (const stall of [false, true]) {
          const svc = await silentService(stall);
          const out = join(mkdtempSync(join(tmpdir(), 'runlens-silent-')), 'run.parquet');
          try {
            const r = await run(['artifacts', 'fetch', '--run', '5', '--step', '1', '-o', out, '--timeout', '1'], { ...env, RUNLENS_BASE_URL: svc.url });
            expect(r.code, r.stderr).toBe(2);
            expect(r.stderr).toContain(`GET ${svc.url}/api/v2/accounts/${accountId}/runs/5/artifacts/metadata/telemetry-1-otel.parquet?step=1: `);
            expect(r.stderr).toContain(stall ? 'the service stopped answering (nothing more for 1 s)' : 'the service did not answer within 1 s');
            expect(r.stderr).toContain('--timeout S waits longer');
            expect(r.stderr).not.toContain('cannot reach the service');
            expect(existsSync(out)).toBe(false);
          } finally {
            await svc.close();
          }
        }
      }, 30_000);
    });

    it('starts a full listing over when the list changes between pages, and fails when it keeps changing (exit 2)', async () => {
      // An account of its own, with more jobs than one page (100) holds.
      const acct = JSON.parse(cli(['accounts', 'create', 'Paged', '--data', data, '--format', 'json']).stdout);
      const token = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout).token;
      const api = async (method: string, path: string, body?: unknown) => (await fetch(`${env.RUNLENS_BASE_URL}/api/v2/accounts/${acct.id}${path}`,
        { method, headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body) })).json() as any;
      const ids: number[] = [];
      for (let i = 0; i < 110; i++) ids.push((await api('POST', '/jobs/', { name: `p${i}`, execute_steps: ['node -v'], project_id: 1, environment_id: 1 })).data.id);
      // Forwards each request; before a request for the second page, deletes the oldest job (while `deletes` lasts).
      let deletes = 1;
      const proxy = await httpServer(async (req, res) => {
        if (laterPage(req.url!) && deletes > 0) {
          deletes--;
          await api('DELETE', `/jobs/${ids.shift()}/`);
        }
        await forward(req, res);
      });
      try {
        const asIt = { RUNLENS_BASE_URL: proxy.url, RUNLENS_ACCOUNT_ID: String(acct.id), RUNLENS_API_TOKEN: token };
        const once = await run(['jobs', 'list', '--format', 'json'], asIt);
        expect(once.code, once.stderr).toBe(0);
        expect((await api('GET', '/jobs/?limit=1')).extra.pagination.total_count).toBe(109);
        expect(ids).toHaveLength(109);
        expect(JSON.parse(once.stdout).map((j: any) => j.id)).toEqual(ids);
        deletes = Infinity;
        const always = await run(['jobs', 'list'], asIt);
        expect(always.code).toBe(2);
        expect(always.stderr).toMatch(new RegExp(`^runlens: GET ${proxy.url}/api/v2/accounts/${acct.id}/jobs/: the list changed while it was read`));
        expect(always.stdout).toBe('');
      } finally {
        await closeServer(proxy.server);
      }
    });

    it('starts a listing over when a delete and a create between two pages keep the total, and fails when that keeps happening (exit 2)', async () => {
      const acct = JSON.parse(cli(['accounts', 'create', 'Shifted', '--data', data, '--format', 'json']).stdout);
      const token = JSON.parse(cli(['tokens', 'create', '--account', String(acct.id), '--permission-set', 'developer', '--data', data, '--format', 'json']).stdout).token;
      const api = async (method: string, path: string, body?: unknown) => (await fetch(`${env.RUNLENS_BASE_URL}/api/v2/accounts/${acct.id}${path}`,
        { method, headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body) })).json() as any;
      const create = async (name: string) => (await api('POST', '/jobs/', { name, execute_steps: ['node -v'], project_id: 1, environment_id: 1 })).data.id as number;
      const ids: number[] = [];
      for (let i = 0; i < 110; i++) ids.push(await create(`s${i}`));
      // Before a request for a later page: delete the oldest job and create one, so the total stays 110.
      let changes = 1;
      const proxy = await httpServer(async (req, res) => {
        if (laterPage(req.url!) && changes > 0) {
          changes--;
          await api('DELETE', `/jobs/${ids.shift()}/`);
          ids.push(await create('added'));
        }
        await forward(req, res);
      });
      try {
        const asIt = { RUNLENS_BASE_URL: proxy.url, RUNLENS_ACCOUNT_ID: String(acct.id), RUNLENS_API_TOKEN: token };
        const once = await run(['jobs', 'list', '--format', 'json'], asIt);
        expect(once.code, once.stderr).toBe(0);
        expect((await api('GET', '/jobs/?limit=1')).extra.pagination.total_count).toBe(110);
        expect(JSON.parse(once.stdout).map((j: any) => j.id)).toEqual(ids);
        changes = Infinity;
        const always = await run(['jobs', 'list'], asIt);
        expect(always.code).toBe(2);
        expect(always.stderr).toMatch(new RegExp(`^runlens: GET ${proxy.url}/api/v2/accounts/${acct.id}/jobs/: the list changed while it was read`));
        expect(always.stdout).toBe('');
      } finally {
        await closeServer(proxy.server);
      }
    });

    it('escapes line breaks and tabs in a value of `field<TAB>value` output, so no value forges a field line', () => {
      const made = cli(['webhooks', 'create', '--name', 'forged', '--url', 'https://example.com/f', '--event-types', 'job.run.completed',
        '--description', 'x\nactive\tfalse'], env);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stdout).toContain('description\tx ⏎ active false\n');
      expect(made.stdout).not.toMatch(/^active\tfalse$/m);
      expect(made.stdout).toMatch(/^active\ttrue$/m);
    });

    it('`jobs runs` of a job that does not exist and `tokens list` of an account that does not exist are exit 2 naming it', () => {
      const runs = cli(['jobs', 'runs', '999999'], env);
      expect(runs.code).toBe(2);
      expect(runs.stderr).toContain(`/api/v2/accounts/${accountId}/jobs/999999/: 404 not found: `);
      expect(runs.stderr).toContain('(job not found)');
      expect(runs.stdout).toBe('');
      const tokens = cli(['tokens', 'list', '--account', '999999', '--data', data]);
      expect(tokens.code).toBe(2);
      expect(tokens.stderr).toContain(`--account: no account 999999 in ${data}`);
      expect(tokens.stdout).toBe('');
    });

    describe('artifacts fetch of a run that has not finished, and -o a new folder', () => {
      const parquet = Buffer.from('PAR1 hand-written stand-in PAR1');
      /** A service with run 7: step 1 stored its telemetry, step 2 has not (running, or finished without any). */
      async function runService(finished: boolean) {
        return httpServer((req, res) => {
          const json = (code: number, data: unknown) => res.writeHead(code, { 'content-type': 'application/json' })
            .end(JSON.stringify({ status: { code, is_success: code === 200, user_message: code === 200 ? 'Success!' : 'not found' }, data }));
          if (req.url!.includes('/runs/7/?include_related=')) {
            return json(200, { id: 7, job_id: 1, status: finished ? 10 : 3, status_humanized: finished ? 'Success' : 'Running', is_complete: finished,
              finished_at: finished ? '2026-11-26 00:00:00.000000+00:00' : null,
              run_steps: [{ index: 1, name: 'a', status: 10, telemetry_artifact: 'telemetry-1-otel.parquet' },
                { index: 2, name: 'b', status: finished ? 10 : 3, telemetry_artifact: null }] });
          }
          if (req.url!.includes('/runs/7/artifacts/metadata/telemetry-1-otel.parquet')) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(parquet);
          return json(404, null);
        });
      }

      it('refuses a run still running (exit 2), saying its telemetry is stored when it ends and how to wait for that', async () => {
        const svc = await runService(false);
        const dir = mkdtempSync(join(tmpdir(), 'runlens-running-'));
        try {
          const at = { ...env, RUNLENS_BASE_URL: svc.url };
          const out = join(dir, 'run.parquet');
          const all = await run(['artifacts', 'fetch', '--run', '7', '-o', out], at);
          expect(all.code).toBe(2);
          expect(all.stderr).toContain('run 7 is still Running: its telemetry is stored when the run ends; fetch it then');
          expect(all.stderr).toContain('`runlens jobs run-status 7`');
          expect(all.stderr).toContain('`runlens jobs run JOB --wait`');
          expect(all.stderr).not.toContain('--step');
          expect(all.stdout).toBe('');
          expect(existsSync(out)).toBe(false);

          const one = await run(['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', out], at);
          expect(one.code, one.stderr).toBe(0);
          expect(readFileSync(out)).toEqual(parquet);

          const notYet = await run(['artifacts', 'fetch', '--run', '7', '--step', '2', '-o', join(dir, 'two.parquet')], at);
          expect(notYet.code).toBe(2);
          expect(notYet.stderr).toContain("run 7 is still Running: step 2's telemetry is stored when the run ends; fetch it then");
          expect(notYet.stderr).not.toContain('has not finished');
          expect(existsSync(join(dir, 'two.parquet'))).toBe(false);
        } finally {
          await closeServer(svc.server);
          rmSync(dir, { recursive: true, force: true });
        }
      });

      it('-o a path ending in / that does not exist is a folder: made, and the artifact written into it', async () => {
        const svc = await runService(true);
        const dir = mkdtempSync(join(tmpdir(), 'runlens-newdir-'));
        try {
          const at = { ...env, RUNLENS_BASE_URL: svc.url };
          const one = await run(['artifacts', 'fetch', '--run', '7', '--step', '1', '-o', join(dir, 'a', 'b') + '/'], at);
          expect(one.code, one.stderr).toBe(0);
          expect(readFileSync(join(dir, 'a', 'b', 'telemetry-1-otel.parquet'))).toEqual(parquet);
          const all = await run(['artifacts', 'fetch', '--run', '7', '-o', join(dir, 'c') + '/'], at);
          expect(all.code, all.stderr).toBe(0);
          expect(readFileSync(join(dir, 'c', 'telemetry-1-otel.parquet'))).toEqual(parquet);
        } finally {
          await closeServer(svc.server);
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    it('accounts and tokens refuse a folder without service data (exit 2) and create nothing there', () => {
      const parent = mkdtempSync(join(tmpdir(), 'runlens-nodata-'));
      try {
        const typo = join(parent, 'typo');
        const refused = (args: string[], e: Record<string, string> = {}) => {
          const r = cli(args, e);
          expect(r.code, args.join(' ')).toBe(2);
          expect(r.stderr, args.join(' ')).toContain(`${typo} holds no service data (expected ${join(typo, 'runlens.sqlite')})`);
        };
        for (const args of [['accounts', 'list'], ['tokens', 'list'], ['tokens', 'revoke', '1'], ['tokens', 'create', '--account', '1', '--permission-set', 'developer']]) {
          refused([...args, '--data', typo]);
        }
        refused(['accounts', 'list'], { RUNLENS_DATA: typo });
        expect(existsSync(typo)).toBe(false);
        mkdirSync(typo);
        refused(['tokens', 'list', '--data', typo]);
        expect(readdirSync(typo)).toEqual([]);
        // Creating an account is what makes the store.
        expect(cli(['accounts', 'create', 'First', '--data', typo]).code).toBe(0);
        const listed = cli(['accounts', 'list', '--data', typo, '--format', 'json']);
        expect(listed.code, listed.stderr).toBe(0);
        expect(JSON.parse(listed.stdout).map((x: any) => x.name)).toEqual(['First']);
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    });

    it('`--format json` says on stderr when a listing shows only part of it; stdout stays JSON', () => {
      const job = JSON.parse(cli(['jobs', 'create', '--name', 'twice', '--step', 'node -v', '--format', 'json'], env).stdout);
      for (let i = 0; i < 2; i++) expect(cli(['jobs', 'run', String(job.id)], env).code).toBe(0);
      const runs = cli(['jobs', 'runs', String(job.id), '--limit', '1', '--format', 'json'], env);
      expect(runs.code, runs.stderr).toBe(0);
      expect(JSON.parse(runs.stdout)).toHaveLength(1);
      expect(runs.stderr).toBe('1 of 2 runs shown, from offset 0; see --limit and --offset\n');
      const all = cli(['jobs', 'runs', String(job.id), '--format', 'json'], env);
      expect(JSON.parse(all.stdout)).toHaveLength(2);
      expect(all.stderr).toBe('');
    });
  });

  // Each --help loads every command module (as `runlens --help` does), so these run side by side.
  it('every client command shows an example in --help, and says how accounts and tokens reach the data', async () => {
    const commands = [['jobs', 'create'], ['jobs', 'list'], ['jobs', 'get'], ['jobs', 'delete'], ['jobs', 'run'], ['jobs', 'runs'], ['jobs', 'run-status'],
      ['webhooks', 'events'], ['webhooks', 'receipt'], ['accounts', 'list'], ['accounts', 'create'], ['tokens', 'list'], ['tokens', 'revoke'], ['tokens', 'create'],
      ['accounts'], ['tokens']];
    const helps = await Promise.all(commands.map((c) => run([...c, '--help'])));
    commands.forEach((c, i) => {
      expect(helps[i]!.code, c.join(' ')).toBe(0);
      if (c.length === 1) expect(helps[i]!.stdout.replace(/\s+/g, ' ')).toContain('directly, not over HTTP');
      else expect(helps[i]!.stdout, c.join(' ')).toMatch(new RegExp(`Examples:\\n\\s+runlens ${c.join(' ')}`));
    });
  }, 180_000);
});
