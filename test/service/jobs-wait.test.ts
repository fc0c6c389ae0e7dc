/**
 * `jobs run --wait` follows a run through a service that restarts (its database, say): a poll answered
 * 5xx or not answered at all is tried again; an answer that cannot change (404, 401) ends the wait.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClientError } from '../../src/client/http.js';
import { JobsClient, WaitTimeout, type RunInfo } from '../../src/client/jobs.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => {
    s.close(r);
    s.closeAllConnections();
  })));
});

const run = (status: number, humanized: string): RunInfo => ({ id: 7, status, status_humanized: humanized, finished_at: status >= 10 ? '2026-11-26T00:00:00Z' : null });

/** A service answering the run's GETs in turn with `answers` (a status code, or a run for 200), the last one for good. */
async function service(answers: (number | RunInfo | 'hang-up' | 'silent')[], answerTimeoutMs?: number): Promise<{ client: JobsClient; gets: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    const a = answers[Math.min(n++, answers.length - 1)]!;
    if (a === 'hang-up') return req.socket.destroy();
    if (a === 'silent') return;
    if (typeof a === 'number') {
      res.writeHead(a, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ status: { code: a, is_success: false, user_message: `down (${a})` }, data: null }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: { code: 200, is_success: true }, data: a }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { client: new JobsClient({ baseUrl: `http://127.0.0.1:${port}`, token: 't', accountId: 1, answerTimeoutMs }), gets: () => n };
}

describe('jobs run --wait through a restarting service', () => {
  it('tries a poll again after 5xx answers and a dropped connection, and returns the finished run', async () => {
    const { client, gets } = await service([run(3, 'Running'), 503, 500, 'hang-up', 502, run(10, 'Success')]);
    const retried: string[] = [];
    const r = await client.waitFor(7, { intervalMs: 5, onRetry: (e) => retried.push(e.message) });
    expect(r.status_humanized).toBe('Success');
    expect(gets()).toBe(6);
    expect(retried).toHaveLength(4);
    expect(retried[0]).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/accounts\/1\/runs\/7\/.*: 503 service unavailable: down \(503\)/);
    expect(retried[2]).toContain('cannot reach the service');
  });

  it('gives up with the last error when the service stays down longer than retryForMs', async () => {
    const { client } = await service([run(3, 'Running'), 503]);
    const retried: string[] = [];
    const e = await client.waitFor(7, { intervalMs: 5, retryForMs: 100, onRetry: (x) => retried.push(x.message) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiClientError);
    expect((e as ApiClientError).status).toBe(503);
    expect(retried.length).toBeGreaterThan(1);
  });

  it('tries a poll again that the service took and did not answer within the answer timeout', async () => {
    const { client, gets } = await service([run(3, 'Running'), 'silent', run(10, 'Success')], 200);
    const retried: string[] = [];
    const r = await client.waitFor(7, { intervalMs: 5, onRetry: (e) => retried.push(e.message) });
    expect(r.status_humanized).toBe('Success');
    expect(gets()).toBe(3);
    expect(retried).toEqual([expect.stringMatching(/GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/accounts\/1\/runs\/7\/.*: the service did not answer within 0\.2 s$/)]);
  });

  it('ends the wait at its timeout while a poll is not answered (WaitTimeout naming that poll)', async () => {
    const { client } = await service([run(3, 'Running'), 'silent']);
    const e = await client.waitFor(7, { intervalMs: 5, timeoutMs: 300 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(WaitTimeout);
    expect((e as WaitTimeout).run?.status_humanized).toBe('Running');
    expect((e as WaitTimeout).noAnswer?.request).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/accounts\/1\/runs\/7\//);
  });

  it('ends the wait at once on an answer that cannot change (404)', async () => {
    const { client, gets } = await service([run(3, 'Running'), 404, run(10, 'Success')]);
    const e = await client.waitFor(7, { intervalMs: 5 }).catch((x: unknown) => x);
    expect((e as ApiClientError).status).toBe(404);
    expect(gets()).toBe(2);
  });
});
