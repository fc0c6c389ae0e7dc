/**
 * `record` / `migrate --export-to-otlp` end to end against endpoints that misbehave: the OTLP copy
 * never holds up the command or the JSONL, and what the endpoint did not get is said.
 */
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { attrsToObject, decodeLogsRequest, decodeTraceRequest } from '../../src/otlp/decode.js';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { LEGACY, sample, samplesNote } from '../helpers/samples.js';

const note = samplesNote(LEGACY);
const INV = 'bafba111-8366-4a41-b03b-2b9243c64d42';
const event = (name: string, data: object, level: string, msg: string) =>
  JSON.stringify({ data, info: { category: '', code: 'Z', extra: {}, invocation_id: INV, level, msg, name, pid: 1, thread: 'MainThread', ts: '2024-12-17T12:53:36.110883Z' } });

/** An older-engine JSON log of `notes` info-level Note events: notes + 4 records (2 spans, started and ended). */
function manyNotes(dir: string, notes: number): string {
  const lines = [event('MainReportVersion', { log_version: 3, version: '=1.8.2' }, 'info', 'Running with dbt=1.8.2')];
  for (let i = 0; i < notes; i++) lines.push(event('Note', { msg: `note ${i}` }, 'info', `note ${i}`));
  const file = path.join(dir, 'many.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const lineCount = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);

function runAsync(args: string[], env: Record<string, string> = {}): { closed: Promise<{ code: number | null; stderr: string }>; pid: number } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CI: 'true', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return { closed: new Promise((res) => child.on('close', (code) => res({ code, stderr }))), pid: child.pid! };
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
  if (!ok()) throw new Error(`never happened: ${what}`);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => res(Buffer.concat(parts)));
  });
}

async function listen(server: ReturnType<typeof createHttpServer> | ReturnType<typeof createTcpServer>): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('record --export-to-otlp against an endpoint that misbehaves', () => {
  it('an endpoint that never answers: the JSONL holds every line while the export still waits', { timeout: 120_000 }, async () => {
    const dir = tempDir('runlens-otlp-hang-');
    const log = manyNotes(dir, 60_000);
    const held: ServerResponse[] = [];
    const server = createHttpServer((req, res) => {
      req.resume();
      held.push(res);
    });
    const url = await listen(server);
    try {
      const out = path.join(dir, 'cr.jsonl');
      // the exporter's own timeout is far away: only the endpoint's answer could end an export
      const run = runAsync(['record', '-o', out, '--export-to-otlp', '--', 'sh', '-c', `cat '${log}'`], { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_TIMEOUT: '600000' });
      await until('the JSONL holds every line', () => lineCount(out) === 60_004);
      expect(held.length).toBeGreaterThan(0);
      // now the endpoint answers, refusing what it was sent
      const refuse = (res: ServerResponse) => res.writeHead(400).end();
      held.splice(0).forEach(refuse);
      server.removeAllListeners('request');
      server.on('request', (req: IncomingMessage, res: ServerResponse) => (req.resume(), refuse(res)));
      const r = await run.closed;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/recorded 1 invocation, 0 nodes, 60004 records to /);
      expect(r.stderr).toMatch(new RegExp(`runlens: OTLP export to ${url}/v1/traces failed: Bad Request; the endpoint did not get \\d+ of 60002 records`));
    } finally {
      held.forEach((res) => res.destroy());
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('an endpoint that drops every connection: the JSONL is complete, the export is tried once, not for every batch', { timeout: 120_000 }, async () => {
    const dir = tempDir('runlens-otlp-drop-');
    const log = manyNotes(dir, 60_000);
    let connections = 0;
    const server = createTcpServer((s: Socket) => {
      connections++;
      s.destroy();
    });
    const url = await listen(server);
    try {
      const out = path.join(dir, 'cr.jsonl');
      const r = await runAsync(['record', '-o', out, '--export-to-otlp', '--', 'sh', '-c', `cat '${log}'`], { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_TIMEOUT: '2000' }).closed;
      expect(r.code, r.stderr).toBe(0);
      expect(lineCount(out)).toBe(60_004);
      expect(r.stderr).toMatch(new RegExp(`runlens: OTLP export to ${url}/v1/traces failed: .*; the endpoint did not get 60002 of 60002 records`));
      // one batch of spans and one of log records, each with its retries; never the 118 batches of the run
      expect(connections).toBeLessThanOrEqual(12);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('SIGTERM: the command is stopped too, its in-flight node ends canceled, exit 143', async () => {
    const dir = tempDir('runlens-record-term-');
    const out = path.join(dir, 'run.jsonl');
    const pidFile = path.join(dir, 'engine.pid');
    const node = { unique_id: 'model.p.slow', resource_type: 'model', node_name: 'slow', node_path: 'slow.sql', materialized: 'table', node_status: 'started' };
    const script = path.join(dir, 'engine.mjs');
    writeFileSync(script, [
      `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));`,
      `console.log(${JSON.stringify(event('MainReportVersion', { version: '=1.10.0', log_version: 3 }, 'info', 'Running with dbt=1.10.0'))});`,
      `console.log(${JSON.stringify(event('NodeStart', { node_info: node }, 'debug', 'NodeStart'))});`,
      `console.log(${JSON.stringify(event('NodeExecuting', { node_info: node }, 'debug', 'NodeExecuting'))});`,
      'setInterval(() => {}, 1000);',
    ].join('\n'));
    const child = spawn(process.execPath, [CLI, 'record', '-o', out, '--', process.execPath, script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    let enginePid = 0;
    try {
      await until('the node is on disk', () => existsSync(out) && readFileSync(out, 'utf8').includes('Node processed (model.p.slow)'));
      enginePid = Number(readFileSync(pidFile, 'utf8'));
      child.kill('SIGTERM');
      expect(await closed).toBe(143);
      const alive = (() => {
        try {
          process.kill(enginePid, 0);
          return true;
        } catch {
          return false;
        }
      })();
      expect(alive).toBe(false);
      const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const end = recs.find((r) => r.record_type === 'SpanEnd' && r.span_name === 'Node processed (model.p.slow)');
      expect(end.attributes.node_outcome).toBe('NODE_OUTCOME_CANCELED');
      expect(recs.find((r) => r.record_type === 'SpanEnd' && r.event_type.endsWith('Invocation')).status).toEqual({ message: 'Interrupted', code: 2 });
    } finally {
      try {
        if (enginePid) process.kill(enginePid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});

describe('migrate --export-to-otlp', () => {
  it.skipIf(note.missing)(note.title('an endpoint answering 400 is named as the OTLP export that failed, the file is complete; service.version is the engine version'), async () => {
    const dir = tempDir('runlens-migrate-otlp-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    let status = 400;
    const versions = new Set<unknown>();
    const server = createHttpServer(async (req, res) => {
      const body = await readBody(req);
      if (status === 200 && req.url === '/v1/traces') for (const rs of decodeTraceRequest(body).resourceSpans ?? []) versions.add(attrsToObject(rs.resource?.attributes)['service.version']);
      res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
    });
    const url = await listen(server);
    try {
      const out = path.join(dir, 'mig400.jsonl');
      const bad = await runAsync(['migrate', log, '-o', out, '--export-to-otlp'], { OTEL_EXPORTER_OTLP_ENDPOINT: url }).closed;
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(new RegExp(`runlens: OTLP export to ${url}/v1/traces failed: Bad Request; the endpoint did not get \\d+ of \\d+ records \\(${out.replace(/[.]/g, '\\.')} is complete\\)`));
      expect(bad.stderr).not.toMatch(/writing failed/);
      const plain = runCli(['migrate', log, '-o', path.join(dir, 'plain.jsonl')]);
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(path.join(dir, 'plain.jsonl'), 'utf8'));
      status = 200;
      const good = await runAsync(['migrate', log, '-o', path.join(dir, 'mig200.jsonl'), '--export-to-otlp'], { OTEL_EXPORTER_OTLP_ENDPOINT: url }).closed;
      expect(good.code, good.stderr + plain.stderr).toBe(0);
      expect([...versions]).toEqual(['1.8.2']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it.skipIf(note.missing)(note.title('the endpoint gets every record the file holds: node evaluations, queries and debug logs included'), async () => {
    const dir = tempDir('runlens-migrate-otlp-all-');
    const log = sample(LEGACY, 'log_1.8.2_postgres_build_mixed.jsonl');
    const spanNames: string[] = [];
    let logRecords = 0;
    const server = createHttpServer(async (req, res) => {
      const body = await readBody(req);
      if (req.url === '/v1/traces') for (const rs of decodeTraceRequest(body).resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const sp of ss.spans ?? []) spanNames.push(String(sp.name));
      if (req.url === '/v1/logs') for (const rl of decodeLogsRequest(body).resourceLogs ?? []) for (const sl of rl.scopeLogs ?? []) logRecords += (sl.logRecords ?? []).length;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
    const url = await listen(server);
    try {
      const out = path.join(dir, 'all.jsonl');
      const run = await runAsync(['migrate', log, '-o', out, '--export-to-otlp'], { OTEL_EXPORTER_OTLP_ENDPOINT: url }).closed;
      expect(run.code, run.stderr).toBe(0);
      const recs = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { record_type: string; span_name?: string });
      const ended = recs.filter((r) => r.record_type === 'SpanEnd').map((r) => String(r.span_name)).sort();
      expect(ended.some((n) => n.startsWith('Node evaluated'))).toBe(true);
      expect(spanNames.sort()).toEqual(ended);
      expect(logRecords).toBe(recs.filter((r) => r.record_type === 'LogRecord').length);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
