import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import { blockedRange, checkLiteralHost, isBlockedAddress } from '../../src/service/ssrf.js';
import { hmacHex, signatureHeaders, verifyStandardWebhook, verifyWebhookSignature } from '../../src/service/signing.js';
import { splitCommand, stepRefusal } from '../../src/service/command-line.js';
import { accountIdentifier, base62, eventId, ksuid, parseId, subscriptionId } from '../../src/service/ids.js';
import { applyAttempt, activeAfterUpdate, DEFAULT_ARCHIVAL } from '../../src/service/subscription-state.js';
import { parsePositiveSeconds, parseRetryDelays, parseStepCommands } from '../../src/service/cli-options.js';
import type { AttemptOutcome, Job, Run, RunStep, Store, Subscription } from '../../src/service/store/types.js';
import { runView } from '../../src/service/http/views.js';
import { JobRunner } from '../../src/service/runner.js';
import { systemClock } from '../../src/service/clock.js';

describe('SSRF address classes', () => {
  // Every special-purpose range of the IANA registries, the embedded-IPv4 forms (mapped, translated,
  // NAT64, 6to4, IPv4-compatible) and odd spellings: refused.
  it.each([
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'], ['10.0.0.1', 'private'], ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrierGradeNat'], ['100.127.255.254', 'carrierGradeNat'], ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'linkLocal'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.0.0.8', 'reserved'],
    ['192.0.2.5', 'reserved'], ['192.88.99.1', 'reserved'], ['192.168.1.1', 'private'], ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'], ['198.51.100.7', 'reserved'], ['203.0.113.9', 'reserved'], ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'], ['240.0.0.1', 'reserved'], ['255.255.255.255', 'broadcast'],
    ['::', 'unspecified'], ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'], ['fe80::1', 'linkLocal'], ['fe80::1%eth0', 'linkLocal'],
    ['febf::1', 'linkLocal'], ['fc00::1', 'uniqueLocal'], ['fd12:3456::1', 'uniqueLocal'], ['ff02::1', 'multicast'], ['ff05::1:3', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'], ['feff::1', 'deprecatedSiteLocal'], ['2001:db8::1', 'reserved'], ['100::1', 'discard'],
    ['2001:2::1', 'benchmarking'], ['3fff::1', 'reserved'], ['5f00::1', 'segmentRouting'], ['4000::1', 'outside global unicast'],
    ['2001::1', 'teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.0.0.1', 'private'], ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:0:7f00:1', 'loopback'], ['::ffff:0:127.0.0.1', 'loopback'], ['::ffff:0:a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::7f00:1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'linkLocal'], ['64:ff9b::10.0.0.1', 'private'], ['64:ff9b:1::1', 'rfc6052'],
    ['64:ff9b:1:a00:1::', 'rfc6052'], ['2002:7f00:1::', 'loopback'], ['2002:a00:1::1', 'private'], ['2002:c0a8:101::1', 'private'],
    ['2002:a9fe:a9fe::', 'linkLocal'], ['::127.0.0.1', 'ipv4Compatible'], ['::7f00:1', 'ipv4Compatible'], ['::10.0.0.1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'], ['not-an-ip', 'not an IP address'], ['', 'not an IP address'], ['::g', 'not an IP address'],
    ['1.2.3.4.5', 'not an IP address'],
  ])('refuses %s (%s)', (a, range) => {
    expect(isBlockedAddress(a)).toBe(true);
    expect(blockedRange(a)).toContain(range);
  });

  it.each([
    '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '192.169.0.1', '9.255.255.255', '11.0.0.1', '93.184.215.14',
    '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:808:808',
    '::ffff:0:808:808', '64:ff9b::808:808', '64:ff9b::8.8.8.8', '2002:808:808::1',
  ])('allows %s', (a) => {
    expect(isBlockedAddress(a)).toBe(false);
    expect(blockedRange(a)).toBeNull();
  });

  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://017700000001/',
    'http://127.1/', 'http://0/', 'http://[::1]/', 'http://[::ffff:7f00:1]/', 'http://[::ffff:0:7f00:1]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://[fec0::1]/', 'http://[64:ff9b:1::7f00:1]/', 'http://[2001::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://[::127.0.0.1]/',
    'https://169.254.169.254/latest/meta-data/',
  ])('checks the literal host of %s after URL normalisation', (u) => {
    expect(() => checkLiteralHost(new URL(u), false)).toThrow(/refused/);
    expect(() => checkLiteralHost(new URL(u), true)).not.toThrow();
  });

  it('leaves names to the connect-time lookup', () => {
    expect(() => checkLiteralHost(new URL('http://example.com/'), false)).not.toThrow();
  });
});

describe('signatures', () => {
  it('Authorization is the lowercase hex HMAC-SHA256 of the raw body keyed by the secret', () => {
    const body = '{"a":1}';
    const want = createHmac('sha256', 'secret').update(body).digest('hex');
    expect(hmacHex(body, 'secret')).toBe(want);
    expect(signatureHeaders('wev_1', body, 'secret', 1_700_000_000_000).authorization).toBe(want);
    // a fixed vector, so the scheme cannot drift silently
    expect(hmacHex('hello', 'key')).toBe('9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b');
  });

  it('verifies in constant time and rejects bad, short and non-hex values', () => {
    const body = Buffer.from('{"eventId":"wev_x"}');
    const sig = hmacHex(body, 's');
    expect(verifyWebhookSignature(body, sig, 's')).toBe(true);
    expect(verifyWebhookSignature(body, sig.toUpperCase(), 's')).toBe(true);
    expect(verifyWebhookSignature(body, `sha256=${sig}`, 's')).toBe(true);
    expect(verifyWebhookSignature(body, sig, 't')).toBe(false);
    expect(verifyWebhookSignature(Buffer.concat([body, Buffer.from(' ')]), sig, 's')).toBe(false);
    expect(verifyWebhookSignature(body, sig.slice(2), 's')).toBe(false);
    expect(verifyWebhookSignature(body, 'zz' + sig.slice(2), 's')).toBe(false);
    expect(verifyWebhookSignature(body, undefined, 's')).toBe(false);
    expect(verifyWebhookSignature(body, sig, '')).toBe(false);
  });

  it('Standard Webhooks headers sign id.timestamp.body with the base64-decoded secret, within a 5-minute window', () => {
    const secret = Buffer.from('0123456789abcdef0123456789').toString('base64');
    const now = 1_700_000_000_000;
    const h = signatureHeaders('wev_abc', '{}', secret, now);
    expect(h['webhook-timestamp']).toBe('1700000000');
    const mac = createHmac('sha256', Buffer.from(secret, 'base64')).update('wev_abc.1700000000.{}').digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${mac}`);
    const hdr = { id: h['webhook-id'], timestamp: h['webhook-timestamp'], signature: h['webhook-signature'] };
    expect(verifyStandardWebhook('{}', hdr, secret, now + 299_000)).toBe(true);
    expect(verifyStandardWebhook('{}', hdr, `whsec_${secret}`, now)).toBe(true);
    expect(verifyStandardWebhook('{}', hdr, secret, now + 301_000)).toBe(false);
    expect(verifyStandardWebhook('{ }', hdr, secret, now)).toBe(false);
  });

  it('Standard Webhooks verification fails closed on an empty secret and on one that is not strict base64', () => {
    const now = 1_700_000_000_000;
    const forged = (key: Buffer) => {
      const mac = createHmac('sha256', key).update('wev_abc.1700000000.{}').digest('base64');
      return { id: 'wev_abc', timestamp: '1700000000', signature: `v1,${mac}` };
    };
    // a receiver whose secret is unset must not accept a body signed with an empty key
    for (const empty of ['', 'whsec_']) expect(verifyStandardWebhook('{}', forged(Buffer.alloc(0)), empty, now)).toBe(false);
    const secret = `q+/${'A'.repeat(37)}`; // 30 bytes, as the service makes them
    expect(Buffer.from(secret, 'base64').toString('base64')).toBe(secret);
    const hdr = forged(Buffer.from(secret, 'base64'));
    expect(verifyStandardWebhook('{}', hdr, secret, now)).toBe(true);
    // a mistyped secret is not the secret, even where a lenient base64 decoder reads the same bytes
    const mistyped = [secret + 'A', `${secret.slice(0, 20)}!!${secret.slice(20)}`, secret.replace('+', '-'), ` ${secret}`];
    for (const wrong of mistyped) {
      expect(Buffer.from(wrong, 'base64').equals(Buffer.from(secret, 'base64')), wrong).toBe(true);
      expect(verifyStandardWebhook('{}', hdr, wrong, now), wrong).toBe(false);
    }
  });
});

describe('step commands', () => {
  it('splits words and quotes like a shell, without expanding anything', () => {
    expect(splitCommand('dbt build --select "tag:nightly my_model"')).toEqual(['dbt', 'build', '--select', 'tag:nightly my_model']);
    expect(splitCommand(`dbt run --vars '{"a": 1}'`)).toEqual(['dbt', 'run', '--vars', '{"a": 1}']);
    expect(splitCommand('dbt  run ; rm -rf / $HOME `x`')).toEqual(['dbt', 'run', ';', 'rm', '-rf', '/', '$HOME', '`x`']);
    expect(splitCommand('a "" b\\ c')).toEqual(['a', '', 'b c']);
    expect(() => splitCommand('dbt "run')).toThrow(/unclosed/);
  });

  it('allows only bare executable names from the list', () => {
    expect(stepRefusal('dbt build', ['dbt', 'runlens'])).toBeNull();
    expect(stepRefusal('bash -c "dbt build"', ['dbt'])).toMatch(/not allowed/);
    expect(stepRefusal('/tmp/dbt build', ['dbt'])).toMatch(/bare name/);
    expect(stepRefusal('./dbt build', ['dbt'])).toMatch(/bare name/);
    expect(stepRefusal('   ', ['dbt'])).toMatch(/empty/);
  });

  it.each(['accounts create Other', 'tokens create --account 2 --permission-set owner --data ../..', 'serve --port 0', 'tokens list --format json'])(
    'refuses a runlens step that opens or serves the service store: runlens %s', (rest) => {
      expect(stepRefusal(`runlens ${rest}`, ['dbt', 'runlens'])).toMatch(/runlens (accounts|tokens|serve).*not in a job step/);
    });

  it.each([
    ['jobs list --base-url http://169.254.169.254/latest/meta-data# --account 1 --token x', /runlens jobs is a client of the service/],
    ['webhooks test WSU --base-url http://127.0.0.1:9/', /runlens webhooks is a client/],
    ['artifacts fetch --run 1 -o ../../x', /runlens artifacts is a client/],
    ['receive --host 0.0.0.0 --port 4318', /runlens receive listens on a port/],
    ['explore run.jsonl', /runlens explore is interactive/],
    ['record -o r.jsonl -- runlens jobs list', /runlens jobs is a client/],
  ])('refuses a runlens step that calls the service, listens or waits for a terminal: runlens %s', (rest, why) => {
    expect(stepRefusal(`runlens ${rest}`, ['dbt', 'runlens'])).toMatch(why);
  });

  it('checks the command a runlens record step runs as a step of its own', () => {
    const allowed = ['dbt', 'runlens'];
    expect(stepRefusal('runlens record -o run.jsonl -- sh -c "cat /etc/passwd"', allowed)).toMatch(/record runs "sh -c.*executable "sh" is not allowed/);
    expect(stepRefusal('runlens record -o run.jsonl sh -c x', allowed)).toMatch(/executable "sh" is not allowed/);
    expect(stepRefusal('runlens record --export-to-otlp true -- sh -c x', allowed)).toMatch(/not allowed/);
    expect(stepRefusal('runlens record -o run.jsonl -- /bin/dbt build', allowed)).toMatch(/bare name/);
    expect(stepRefusal('runlens record -o run.jsonl -- runlens tokens create --account 2', allowed)).toMatch(/runlens tokens.*not in a job step/);
    expect(stepRefusal('runlens record -- runlens record -- sh -c x', allowed)).toMatch(/executable "sh" is not allowed/);
    expect(stepRefusal('runlens record -o run.jsonl -- sh -c x', [...allowed, 'sh'])).toBeNull();
    for (const ok of ['runlens record -o run.jsonl -- dbt build', 'runlens record --output=run.jsonl --manifest m.json dbt build',
      'runlens record --project-dir . --export-to-otlp -- dbt build --select x', 'runlens record -- runlens record -o r.jsonl -- dbt run']) {
      expect(stepRefusal(ok, allowed), ok).toBeNull();
    }
  });

  it.each([
    ['runlens generate -o x.jsonl | cat', '"|"', 'a pipe'], ['dbt run; dbt test', '";"', 'a command list'], ['dbt run && dbt test', '"&"', 'a background'],
    ['dbt run > out.txt', '">"', 'a redirection'], ['dbt run 2>&1', '">"', 'a redirection'], ['dbt run < in', '"<"', 'a redirection'],
    ['dbt run --select models/*', '"*"', 'a glob'], ['dbt run --select model?', '"?"', 'a glob'], ['dbt run --select [ab]', '"["', 'a glob'],
    ['dbt run --target $TARGET', '"$"', 'a variable'], ['dbt run --target "$TARGET"', '"$"', 'a variable'], ['dbt run --target "`whoami`"', '"`"', 'a command substitution'],
    ['dbt run $(date)', '"$"', 'a variable'], ['dbt run --vars {a,b}', '"{"', 'a brace expansion'], ['dbt run --project-dir ~/p', '"~"', 'a home folder'],
    ['dbt run # nightly', '"#"', 'a comment'], ['dbt run\ndbt test', '"\\n"', 'a command list'], ['dbt (run)', '"("', 'a subshell'],
  ])('refuses shell syntax the runner would not interpret: %s', (command, char, what) => {
    const why = stepRefusal(command, ['dbt', 'runlens']);
    expect(why).toContain(`${char} at character`);
    expect(why).toContain(what);
    expect(why).toMatch(/steps run without a shell/);
  });

  it.each([
    `dbt run --select 'models/*'`, 'dbt run --select "tag:nightly model+"', `dbt run --vars '{"a": 1, "b": [1, 2]}'`, 'dbt run --target \\$TARGET',
    'dbt run --select "a\\$b"', 'dbt run --select path:models/staging a#b', `dbt run --select '~x' "#y"`, 'runlens generate -o gen.jsonl',
  ])('accepts quoted or escaped characters and plain words: %s', (command) => {
    expect(stepRefusal(command, ['dbt', 'runlens'])).toBeNull();
  });
});

describe('ids', () => {
  it('are prefixed 27-character base62 KSUIDs that sort by time', () => {
    expect(subscriptionId(Date.now())).toMatch(/^wsu_[0-9A-Za-z]{27}$/);
    expect(eventId(Date.now())).toMatch(/^wev_[0-9A-Za-z]{27}$/);
    expect(ksuid(Date.UTC(2020, 0, 1)) < ksuid(Date.UTC(2026, 0, 1))).toBe(true);
    // the KSUID reference values: all-zero and all-ones 20-byte ids
    expect(base62(Buffer.alloc(20), 27)).toBe('000000000000000000000000000');
    expect(base62(Buffer.alloc(20, 255), 27)).toBe('aWgEPTl1tmebfsQzFP4bxwgy80V');
    expect(accountIdentifier(1)).toBe(accountIdentifier(1));
    expect(accountIdentifier(1)).not.toBe(accountIdentifier(2));
  });

  it('numeric ids are read from their canonical digits only, never rounded to another id', () => {
    expect(parseId('1')).toBe(1);
    expect(parseId('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    for (const s of ['0', '01', '+1', '1.0', '1e3', ' 1', '', '9007199254740992', '9007199254740993', '9999999999999999', '12345678901234567']) {
      expect(parseId(s), s).toBeNull();
    }
  });
});

describe('subscription state rules', () => {
  const sub: Subscription = { id: 'wsu_x', accountId: 1, name: 'n', description: '', clientUrl: 'https://a', active: true, archived: false,
    deactivateReason: null, eventTypes: ['job.run.completed'], jobIds: [], hmacSecret: 's', createdAt: 0, updatedAt: 0, dispatchedAt: null,
    httpStatusCode: 0, consecutiveFailures: 0, failingSince: null };
  const attempt = (success: boolean, last: boolean, at: number): AttemptOutcome => ({
    receipt: { id: 'r', eventId: 'e', subscriptionId: 'wsu_x', attempt: 1, dispatchedAt: at, httpStatusCode: success ? 200 : 500, errorInfo: null,
      requestHeaders: {}, responseBody: '', durationMs: 1 },
    owner: 'o', success, nextAttemptAt: last ? null : at + 1, now: at,
  });

  it('counts a delivery as failed when its last attempt fails, and a success resets the streak', () => {
    // an attempt that will be retried is not a failed delivery: it reports the endpoint, nothing more
    let s = applyAttempt(sub, attempt(false, false, 10), DEFAULT_ARCHIVAL, false);
    expect(s).toMatchObject({ consecutiveFailures: 0, failingSince: null, httpStatusCode: 500, dispatchedAt: 10 });
    s = applyAttempt(s, attempt(false, true, 20), DEFAULT_ARCHIVAL, false);
    expect(s).toMatchObject({ consecutiveFailures: 1, failingSince: 20 });
    s = applyAttempt(s, attempt(false, false, 25), DEFAULT_ARCHIVAL, false);
    expect(s).toMatchObject({ consecutiveFailures: 1, failingSince: 20 });
    s = applyAttempt(s, attempt(true, true, 30), DEFAULT_ARCHIVAL, false);
    expect(s).toMatchObject({ consecutiveFailures: 0, failingSince: null, httpStatusCode: 200 });
    expect(applyAttempt(s, attempt(false, true, 40), DEFAULT_ARCHIVAL, true).consecutiveFailures).toBe(0); // tests do not count
  });

  it('archives at 1,000 failed deliveries or 7 days of failed deliveries; an attempt that will be retried archives nothing', () => {
    expect(applyAttempt({ ...sub, consecutiveFailures: 999, failingSince: 0 }, attempt(false, true, 1), DEFAULT_ARCHIVAL, false).archived).toBe(true);
    expect(applyAttempt({ ...sub, consecutiveFailures: 998, failingSince: 0 }, attempt(false, true, 1), DEFAULT_ARCHIVAL, false).archived).toBe(false);
    const week = DEFAULT_ARCHIVAL.maxFailingMicros;
    expect(applyAttempt({ ...sub, consecutiveFailures: 1, failingSince: 5 }, attempt(false, true, 5 + week), DEFAULT_ARCHIVAL, false).archived).toBe(true);
    expect(applyAttempt({ ...sub, consecutiveFailures: 1, failingSince: 5 }, attempt(false, true, 4 + week), DEFAULT_ARCHIVAL, false).archived).toBe(false);
    expect(applyAttempt({ ...sub, consecutiveFailures: 1, failingSince: 5 }, attempt(false, false, 6 + week), DEFAULT_ARCHIVAL, false)).toMatchObject({
      archived: false, consecutiveFailures: 1, failingSince: 5 });
  });

  it('reactivates on active true or on a new URL unless the subscription was active', () => {
    const archived = { ...sub, active: true, archived: true };
    expect(activeAfterUpdate(archived, { active: true })).toBe(true);
    expect(activeAfterUpdate(archived, { client_url: 'https://b' })).toBe(true);
    expect(activeAfterUpdate(archived, { client_url: 'https://a' })).toBe(false);
    expect(activeAfterUpdate({ ...sub, active: false }, { client_url: 'https://b', active: false })).toBe(true);
    expect(activeAfterUpdate(sub, { client_url: 'https://b', active: false })).toBe(false);
    expect(activeAfterUpdate(sub, { name: 'x' } as never)).toBe(true);
  });
});

describe('serve options', () => {
  it('parses retry delays in seconds and names the flag when wrong', () => {
    expect(parseRetryDelays('10,60,300,1800')).toEqual([10_000, 60_000, 300_000, 1_800_000]);
    expect(parseRetryDelays('0.01')).toEqual([10, 10, 10, 10]);
    expect(() => parseRetryDelays('1,2,3,4,5')).toThrow(/--retry-delays/);
    expect(() => parseRetryDelays('-1')).toThrow(/--retry-delays/);
    expect(parseStepCommands('dbt, runlens')).toEqual(['dbt', 'runlens']);
    expect(() => parseStepCommands('dbt,/bin/sh')).toThrow(/--step-commands/);
  });

  it('refuses seconds beyond what a timer can hold (2^31 - 1 ms), naming the flag', () => {
    expect(parsePositiveSeconds('--delivery-timeout', 2_147_483)).toBe(2_147_483_000);
    expect(() => parsePositiveSeconds('--delivery-timeout', 2_200_000)).toThrow(/^--delivery-timeout: at most 2147483 seconds .*got 2200000$/);
    expect(() => parsePositiveSeconds('--claim-lease', 1e300)).toThrow(/^--claim-lease: at most/);
  });
});

describe('run and step duration', () => {
  const S = 1_000_000;
  const t0 = 1_780_000_000 * S;
  const job: Job = { id: 1, accountId: 1, name: 'j', projectId: 1, environmentId: 1, projectName: 'p', environmentName: 'e', toolVersion: '', executeSteps: ['node -v'], createdAt: t0 };
  const run = (o: Partial<Run>): Run => ({ id: 7, accountId: 1, jobId: 1, status: 3, statusMessage: null, cause: 'c', createdAt: t0, startedAt: null, finishedAt: null, erroredAt: null, ...o });
  const step = (o: Partial<RunStep>): RunStep => ({ runId: 7, index: 1, name: 'node -v', status: 3, exitCode: null, logs: '', startedAt: null, finishedAt: null, artifact: null, telemetryNotes: [], ...o });

  it('is the time so far while running, started to finished once finished, and zero before it starts', () => {
    const now = t0 + 3725 * S;
    const running = runView(run({ startedAt: t0 + 5 * S }), job, now, [step({ startedAt: t0 + 65 * S })]);
    expect(running.duration).toBe('01:02:00');
    expect((running.run_steps as { duration: string }[])[0]!.duration).toBe('01:01:00');
    expect(runView(run({ status: 1 }), job, now, [step({ status: 1 })]).duration).toBe('00:00:00');
    expect((runView(run({ status: 1 }), job, now, [step({ status: 1 })]).run_steps as { duration: string }[])[0]!.duration).toBe('00:00:00');
    const done = runView(run({ status: 10, startedAt: t0, finishedAt: t0 + 42 * S }), job, now, [step({ status: 10, startedAt: t0, finishedAt: t0 + 40 * S })]);
    expect(done.duration).toBe('00:00:42');
    expect((done.run_steps as { duration: string }[])[0]!.duration).toBe('00:00:40');
  });
});

describe('job runner', () => {
  it("stop() resolves only once a tick in flight is over, so the next holder of the store finds the runs free", async () => {
    // a shared store whose lease renewal is slow: the tick is still writing when stop() is called
    let renewing!: () => void;
    const renewStarted = new Promise<void>((r) => (renewing = r));
    let finishRenewal!: () => void;
    const renewal = new Promise<void>((r) => (finishRenewal = r));
    const calls: string[] = [];
    const store = {
      exclusive: false,
      async renewRunLeases() {
        calls.push('renew');
        renewing();
        await renewal;
      },
      async claimAbandonedRuns() {
        calls.push('claim');
        return [];
      },
    } as unknown as Store;
    const runner = new JobRunner({ store, clock: systemClock, stepCommands: ['node'], workDir: tmpdir(), onEvents: () => {}, leaseMs: 150 });
    runner.start();
    await renewStarted;
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false);
    finishRenewal();
    await stopping;
    // the tick ran to its end before stop() resolved, and no tick starts after it
    expect(calls).toEqual(['renew', 'claim']);
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toEqual(['renew', 'claim']);
  });
});
