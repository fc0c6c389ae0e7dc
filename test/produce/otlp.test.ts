import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attrsToObject, decodeLogsRequest, decodeTraceRequest, type OtlpLogRecord, type OtlpSpan } from '../../src/otlp/decode.js';
import { seededIds } from '../../src/produce/ids.js';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import { TelemetryWriter } from '../../src/produce/writer.js';
import { tempDir } from './helpers.js';

interface Received {
  path: string;
  contentType: string | undefined;
  body: Buffer;
}

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((res, rej) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => res(Buffer.concat(parts)));
    req.on('error', rej);
  });
}

let server: Server;
let base = '';
const received: Received[] = [];
/** status codes to answer before succeeding (to exercise retries) */
const failFirst: number[] = [];
/** protobuf answer bodies by path (an OTLP partialSuccess), instead of an empty one */
const answers = new Map<string, Buffer>();

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const b = await body(req);
    const fail = failFirst.shift();
    if (fail) {
      res.writeHead(fail).end();
      return;
    }
    received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: b });
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(answers.get(req.url ?? ''));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function smallRun(w: TelemetryWriter): { traceId: string } {
  let t = 1_772_073_188_904_419_000n;
  const at = (ms: number) => (t += BigInt(ms) * 1_000_000n);
  const inv = w.startInvocation({ command: 'build', at: t });
  const run = inv.startPhase('run', { nodeCount: 2, at: at(1) });
  const m = inv.startNode({ uniqueId: 'model.shop.orders', nodeType: 'model', materialization: 'table', relativePath: 'models/orders.sql', checksum: 'c1' }, { at: at(1) });
  const e = m.evaluate(run, { at: at(1) });
  const q = e.startQuery({ sql: 'create table orders as select 1', adapterType: 'duckdb' }, { at: at(1) });
  q.end({ queryId: 'q-1', at: at(5) });
  e.userLog('hello from jinja', { line: 3, column: 5, relativePath: 'macros/x.sql', packageName: 'shop', at: at(1) });
  e.end({ outcome: 'success', rowsAffected: 10 }, { at: at(1) });
  m.end(undefined, { at: at(1) });
  const tn = inv.startNode({ uniqueId: 'test.shop.not_null_orders_id.abc', name: 'not_null_orders_id', nodeType: 'test', materialization: 'test' }, { at: at(1) });
  const te = tn.evaluate(run, { at: at(1) });
  te.end({ outcome: 'success', test: { outcome: 'failed', failingRows: 2 } }, { at: at(3) });
  tn.end(undefined, { at: at(1) });
  run.end({ at: at(1) });
  inv.end({ at: at(1) });
  return { traceId: inv.traceId };
}

describe('OTLP sink', () => {
  it('posts protobuf spans and logs that decode with the OTLP schema', async () => {
    received.length = 0;
    const w = new TelemetryWriter({ sinks: [new OtlpSink({ endpoint: base, level: 'debug', serviceVersion: '2.0.0-test' })], ids: seededIds(7), version: '2.0.0-test' });
    const { traceId } = smallRun(w);
    await w.close();
    expect(w.sinkErrors.size).toBe(0);

    const traceBodies = received.filter((r) => r.path === '/v1/traces');
    const logBodies = received.filter((r) => r.path === '/v1/logs');
    expect(traceBodies.length).toBeGreaterThan(0);
    expect(logBodies.length).toBeGreaterThan(0);
    expect(traceBodies[0]!.contentType).toBe('application/x-protobuf');

    const spans: OtlpSpan[] = [];
    let resource: Record<string, unknown> = {};
    for (const b of traceBodies) {
      const req = decodeTraceRequest(b.body);
      for (const rs of req.resourceSpans ?? []) {
        resource = attrsToObject(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          expect(ss.scope?.name).toBe('dbt-fusion');
          spans.push(...(ss.spans ?? []));
        }
      }
    }
    expect(resource['service.name']).toBe('dbt-fusion');
    expect(resource['service.version']).toBe('2.0.0-test');
    // Finished spans only (no SpanStart duplicates): process, invocation, phase, 2 nodes, 2 evaluations, 1 query.
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        expect.stringMatching(/^dbt invocation \(/),
        expect.stringMatching(/^dbt process \(/),
        'Node evaluated (model.shop.orders)',
        'Node evaluated (test.shop.not_null_orders_id.abc)',
        'Node processed (model.shop.orders)',
        'Node processed (test.shop.not_null_orders_id.abc)',
        'Phase: RUN (nodes: 2)',
        'Query executed (model.shop.orders)',
      ].sort(),
    );
    const byName = new Map(spans.map((s) => [s.name, s]));
    const inv = spans.find((s) => s.name.startsWith('dbt invocation'))!;
    const phase = byName.get('Phase: RUN (nodes: 2)')!;
    const ev = byName.get('Node evaluated (model.shop.orders)')!;
    const np = byName.get('Node processed (model.shop.orders)')!;
    const q = byName.get('Query executed (model.shop.orders)')!;
    for (const s of spans) {
      expect(s.traceId).toBe(traceId);
      expect(s.kind).toBe('SPAN_KIND_INTERNAL');
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(inv.parentSpanId ?? '').toBe('');
    expect(phase.parentSpanId).toBe(inv.spanId);
    expect(np.parentSpanId).toBe(inv.spanId);
    expect(ev.parentSpanId).toBe(phase.spanId);
    expect(q.parentSpanId).toBe(ev.spanId);
    expect(ev.links?.[0]?.spanId).toBe(np.spanId);
    expect(q.startTimeUnixNano).toBe('1772073188908419000');

    const npAttrs = attrsToObject(np.attributes);
    expect(npAttrs).toMatchObject({ node_outcome: 'NODE_OUTCOME_SUCCESS', rows_affected: '10', unique_id: 'model.shop.orders', node_type: 'NODE_TYPE_MODEL' });
    expect(npAttrs.event_type).toBeUndefined();
    const testAttrs = attrsToObject(byName.get('Node processed (test.shop.not_null_orders_id.abc)')!.attributes);
    // nested messages are JSON text on spans
    expect(JSON.parse(testAttrs.node_test_detail as string)).toEqual({ failing_rows: 2, test_outcome: 'TEST_OUTCOME_FAILED' });
    expect(phase.status?.code).toBe('STATUS_CODE_OK');
    const invAttrs = attrsToObject(inv.attributes);
    expect(JSON.parse(invAttrs.metrics as string).status_counts).toEqual({ error: '1', success: '1' });
    expect(inv.status).toMatchObject({ code: 'STATUS_CODE_ERROR', message: 'Executed with errors' });

    const logs: OtlpLogRecord[] = [];
    for (const b of logBodies) for (const rl of decodeLogsRequest(b.body).resourceLogs ?? []) for (const sl of rl.scopeLogs ?? []) logs.push(...(sl.logRecords ?? []));
    expect(logs).toHaveLength(1);
    const log = logs[0]!;
    expect(log.eventName).toBe('v1.public.events.fusion.log.UserLogMessage');
    expect(log.spanId).toBe(ev.spanId);
    expect(log.traceId).toBe(traceId);
    expect(log.severityText).toBe('DEBUG');
    expect(log.body?.stringValue).toBe('hello from jinja');
    const la = attrsToObject(log.attributes);
    expect(la).toMatchObject({ column: '5', phase: 'EXECUTION_PHASE_RUN', unique_id: 'model.shop.orders' });
    expect(la.line).toBeUndefined(); // file/line give way to code location keys, as in the engine
  });

  it('retries after a 503 and still delivers', async () => {
    received.length = 0;
    failFirst.push(503);
    const w = new TelemetryWriter({ sinks: [new OtlpSink({ endpoint: base, level: 'info' })], ids: seededIds(8) });
    smallRun(w);
    await w.close();
    expect(w.sinkErrors.size).toBe(0);
    const names = received.filter((r) => r.path === '/v1/traces').flatMap((r) => decodeTraceRequest(r.body).resourceSpans!.flatMap((rs) => rs.scopeSpans!.flatMap((s) => s.spans!.map((x) => x.name))));
    // info level: no NodeEvaluated or QueryExecuted spans
    expect(names).toHaveLength(5);
  });

  it('an endpoint that is down is reported once and the JSONL sink keeps every record', async () => {
    const tmp = tempDir();
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const errors: string[] = [];
    const path = join(tmp.dir, 'otel.jsonl');
    const w = new TelemetryWriter({
      sinks: [new OtlpSink({ endpoint: `http://127.0.0.1:${port}`, timeoutMillis: 1000 }), new JsonlSink({ path, append: false })],
      ids: seededIds(9),
      onSinkError: (s) => errors.push(s),
    });
    smallRun(w);
    await w.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^OTLP export to /);
    // what a program checks after close(): the failed sink and what the endpoint did not get
    expect([...w.sinkErrors.keys()]).toEqual(errors);
    expect(w.sinkErrors.get(errors[0]!)!.message).toMatch(/ECONNREFUSED.*the endpoint did not get \d+ of \d+ records/);
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(17); // 8 spans x 2 + 1 log
    tmp.cleanup();
  });

  it('records the endpoint rejects (partialSuccess) are counted and said with its message', async () => {
    received.length = 0;
    // ExportTraceServiceResponse / ExportLogsServiceResponse { partial_success { rejected = N, error_message } }
    const partial = (n: number, msg: string) => {
      const m = Buffer.from(msg);
      const inner = Buffer.concat([Buffer.from([0x08, n, 0x12, m.length]), m]);
      return Buffer.concat([Buffer.from([0x0a, inner.length]), inner]);
    };
    answers.set('/v1/traces', partial(2, 'span without a name'));
    answers.set('/v1/logs', partial(1, 'bad body'));
    const errors: string[] = [];
    const w = new TelemetryWriter({ sinks: [new OtlpSink({ endpoint: base, level: 'debug' })], ids: seededIds(10), onSinkError: (s, e) => errors.push(`${s}: ${e.message}`) });
    try {
      smallRun(w);
      await w.close();
    } finally {
      answers.clear();
    }
    expect(errors).toEqual([`OTLP export to ${base}/v1/traces: OTLP endpoint rejected 2 spans, 1 log records: span without a name`]);
  });

  it('service.version is the engine version of each run, from its process span', async () => {
    received.length = 0;
    const sink = new OtlpSink({ endpoint: base, level: 'info' });
    const traces: [string, string][] = [];
    for (const [seed, version] of [[11, '1.8.2'], [12, '1.10.0']] as const) {
      // one sink shared by several runs, as migrate does: closed once, below
      const w = new TelemetryWriter({ sinks: [sink], ids: seededIds(seed), package: 'dbt', version });
      traces.push([smallRun(w).traceId, version]);
    }
    await sink.close();
    const versions = new Map<string, Set<unknown>>();
    for (const b of received.filter((r) => r.path === '/v1/traces'))
      for (const rs of decodeTraceRequest(b.body).resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) for (const sp of ss.spans ?? []) versions.set(sp.traceId!, (versions.get(sp.traceId!) ?? new Set()).add(attrsToObject(rs.resource?.attributes)['service.version']));
    expect(traces.map(([t]) => [...(versions.get(t) ?? [])])).toEqual(traces.map(([, v]) => [v]));
  });

  it('a sink that is not live (migrate, generate) waits for its export and loses nothing, however many records', async () => {
    received.length = 0;
    // many runs at once, written faster than they are sent: a live sink's queue would drop most of them
    const w = new TelemetryWriter({ sinks: [new OtlpSink({ endpoint: base, level: 'debug', maxQueue: 4 })], ids: seededIds(14) });
    for (let i = 0; i < 300; i++) smallRun(w);
    await w.drain();
    await w.close();
    expect(w.sinkErrors.size).toBe(0);
    const spans = received.filter((r) => r.path === '/v1/traces').flatMap((r) => decodeTraceRequest(r.body).resourceSpans!.flatMap((rs) => rs.scopeSpans!.flatMap((x) => x.spans!)));
    const logs = received.filter((r) => r.path === '/v1/logs').flatMap((r) => decodeLogsRequest(r.body).resourceLogs!.flatMap((rl) => rl.scopeLogs!.flatMap((x) => x.logRecords!)));
    expect([spans.length, logs.length]).toEqual([300 * 8, 300]);
  });

  it('a live sink (record): records that do not fit the queue are dropped and counted, never waited for', async () => {
    const tmp = tempDir();
    const held: import('node:http').ServerResponse[] = [];
    const slow = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const path = join(tmp.dir, 'otel.jsonl');
    const errors: string[] = [];
    const otlp = new OtlpSink({ endpoint: url, level: 'debug', live: true, maxQueue: 4, closeTimeoutMillis: 0 });
    const w = new TelemetryWriter({ sinks: [otlp, new JsonlSink({ path, append: false })], ids: seededIds(13), onSinkError: (s, e) => errors.push(`${s}: ${e.message}`) });
    try {
      smallRun(w);
      await w.drain();
      await w.close();
      expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(17);
      // 8 spans and 1 log, 4 of each kind at most queued, nothing answered before the close gave up
      expect(errors).toEqual([`OTLP export to ${url}/v1/traces: still sending 0 s after the run ended; the endpoint did not get 9 of 9 records`]);
    } finally {
      held.forEach((r) => r.destroy());
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
      tmp.cleanup();
    }
  });
});
