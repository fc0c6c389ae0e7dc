import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { trace, context, SpanStatusCode } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OtlpReceiver } from '../../src/ingest/otlp-receiver.js';
import { otlpRoot } from '../../src/otlp/decode.js';
import { readRecords } from '../../src/produce/convert.js';
import { generate } from '../../src/produce/generate/index.js';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';
import { OtlpSink } from '../../src/produce/sinks/otlp.js';
import { ParquetSink } from '../../src/produce/sinks/parquet.js';
import type { Db } from '../../src/store/db.js';
import { loadPaths, openModel } from '../../src/store/load.js';
import { tempDir, writeLines } from '../helpers/fixtures.js';
import { ROOT } from '../helpers/samples.js';
import { postOtlpJson, tracesJson } from './otlp-json.js';
import type { JsonlRecord, SpanEndRecord } from '../../src/produce/record.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startReceiver(opts: Partial<ConstructorParameters<typeof OtlpReceiver>[0]> = {}): Promise<{ rx: OtlpReceiver; db: Db }> {
  const db = await openModel();
  const rx = new OtlpReceiver({ db, port: 0, flushIntervalMs: 50, ...opts });
  await rx.start();
  cleanups.push(async () => {
    await rx.close();
    db.close();
  });
  return { rx, db };
}

const SPAN_COLS = `trace_id, span_id, parent_span_id, span_name, kind, start_ns::VARCHAR AS s, end_ns::VARCHAR AS e, status_code,
  unique_id, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows, resource_type, depth, orphan`;

describe('runlens receive: our own OTLP sink sends a generated run', () => {
  it('builds the same model as loading the JSONL of that run, except what OTLP cannot carry', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 60, seed: 11, failRate: 0.1 });
    const { rx, db } = await startReceiver();
    const sink = new OtlpSink({ endpoint: rx.url, level: 'trace', serviceVersion: '2.0.0-test' });
    for await (const r of readRecords(jsonl)) sink.write(r);
    await sink.close();
    await rx.close();

    const file = await openModel();
    cleanups.push(() => file.close());
    await loadPaths(file, [jsonl]);
    const q = `SELECT ${SPAN_COLS} FROM spans ORDER BY span_id`;
    const fromFile = await file.all(q);
    const fromStream = await db.all(q);
    expect(fromFile.length).toBeGreaterThan(300);
    expect(fromStream).toEqual(fromFile);
    const nodes = `SELECT unique_id, kind, phase, node_outcome, skip_reason, upstream_unique_id, test_outcome, failing_rows, duration_ms, error_text FROM nodes ORDER BY ALL`;
    expect(await db.all(nodes)).toEqual(await file.all(nodes));
    const runs = `SELECT trace_id, invocation_id, command, nodes, success, error, skipped, tests_failed, failed FROM runs`;
    expect(await db.all(runs)).toEqual(await file.all(runs));
    // a receiver on port 0 names the port it was given, where the run came from
    expect(rx.address.port).toBeGreaterThan(0);
    expect(await db.all('SELECT files FROM runs')).toEqual([{ files: `otlp://127.0.0.1:${rx.address.port}` }]);
    const logs = `SELECT trace_id, span_id, time_ns::VARCHAR t, severity_text, body, event_type, unique_id FROM logs ORDER BY ALL`;
    expect(await db.all(logs)).toEqual(await file.all(logs));
    // Attributes and links arrive as they were written, except what OTLP does not carry: null values,
    // and `line` without `file` (it travels as code.line.number beside code.file.path only).
    const attrs = `SELECT record_type, span_id, attributes::VARCHAR AS a, links::VARCHAR AS l FROM record_rows WHERE record_type IN ('SpanEnd', 'LogRecord') ORDER BY span_id, time_ns, body`;
    const parsed = (rows: Record<string, unknown>[]) =>
      rows.map((r) => {
        const a = JSON.parse(r.a as string, (_k, v: unknown) => (v === null ? undefined : v)) as Record<string, unknown>;
        if (!('file' in a)) delete a['line'];
        return { ...r, a, l: r.l === null ? null : JSON.parse(r.l as string) };
      });
    expect(parsed(await db.all(attrs))).toEqual(parsed(await file.all(attrs)));
    // What OTLP cannot carry: SpanStart records (one SpanEnd per span arrives) and event_type on spans (recovered from names).
    expect(await db.scalar(`SELECT count(*)::INT FROM records WHERE record_type = 'SpanStart'`)).toBe(0);
    expect(await db.scalar(`SELECT count(*)::INT FROM spans WHERE event_type = ''`)).toBe(0);
    expect(rx.stats.rejected).toBe(0);
  });
});

describe('runlens receive: records the model already holds', () => {
  it('a run sent again to a second receiver on the same model is kept once, as a load of two copies keeps it', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'run.jsonl');
    await generate({ output: jsonl, runs: 1, nodes: 20, seed: 7, failRate: 0.3 });
    const once = await openModel();
    cleanups.push(() => once.close());
    await loadPaths(once, [jsonl, jsonl]);
    const db = await openModel();
    cleanups.push(() => db.close());
    for (let i = 0; i < 2; i++) {
      const rx = new OtlpReceiver({ db, port: 0, flushIntervalMs: 50 });
      await rx.start();
      const sink = new OtlpSink({ endpoint: rx.url, level: 'trace' });
      for await (const r of readRecords(jsonl)) sink.write(r);
      await sink.close();
      await rx.close();
    }
    const counts = `SELECT (SELECT count(*) FROM logs)::INT AS logs, (SELECT count(*) FROM spans)::INT AS spans`;
    const loaded = await once.one<{ logs: number; spans: number }>(counts);
    expect(loaded!.logs).toBeGreaterThan(0);
    expect(await db.one(counts)).toEqual(loaded);
    const errors = `SELECT unique_id, error_text FROM nodes WHERE error_text IS NOT NULL ORDER BY ALL`;
    expect(await db.all(errors)).toEqual(await once.all(errors));
  });
});

describe('runlens receive: copies that disagree on a status', () => {
  it('an ERROR a second receiver gets for a span the model holds as OK wins, as in a load of both copies', async () => {
    const dir = tempDir();
    const failed = path.join(dir, 'failed.jsonl');
    await generate({ output: failed, runs: 1, nodes: 20, seed: 7, failRate: 0.3 });
    // the same run with every ERROR status written as OK (a copy that missed them)
    const records = readFileSync(failed, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as JsonlRecord);
    const errored = records.filter((r): r is SpanEndRecord => r.record_type === 'SpanEnd' && r.status?.code === 2).map((r) => r.span_id);
    expect(errored.length).toBeGreaterThan(1);
    const calm = writeLines(dir, 'calm.jsonl', records.map((r) =>
      JSON.stringify(r.record_type === 'SpanEnd' && r.status?.code === 2 ? { ...r, status: { message: null, code: 1 } } : r)));
    const loaded = await openModel();
    cleanups.push(() => loaded.close());
    await loadPaths(loaded, [calm, failed]);
    const db = await openModel();
    cleanups.push(() => db.close());
    for (const file of [calm, failed]) {
      const rx = new OtlpReceiver({ db, port: 0, flushIntervalMs: 50 });
      await rx.start();
      const sink = new OtlpSink({ endpoint: rx.url, level: 'trace' });
      for await (const r of readRecords(file)) sink.write(r);
      await sink.close();
      await rx.close();
    }
    const statuses = `SELECT span_id FROM spans WHERE status_code = 2 ORDER BY ALL`;
    expect((await loaded.all<{ span_id: string }>(statuses)).map((r) => r.span_id)).toEqual([...errored].sort());
    expect(await db.all(statuses)).toEqual(await loaded.all(statuses));
    const runs = `SELECT failed, error FROM runs`;
    expect(await db.all(runs)).toEqual(await loaded.all(runs));
  });
});

describe('runlens receive: a client nobody here wrote (the official OpenTelemetry JS SDK)', () => {
  it('takes spans and logs from the OTLP protobuf exporters intact', async () => {
    const { rx, db } = await startReceiver();
    const resource = resourceFromAttributes({ 'service.name': 'dbt-fusion', 'service.version': '2.0.0-sdk' });
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${rx.url}/v1/traces` }))] });
    const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${rx.url}/v1/logs` }) })] });
    const tracer = provider.getTracer('dbt-fusion');
    const logger = loggerProvider.getLogger('dbt-fusion');
    const inv = tracer.startSpan('dbt invocation (019c97ca-fe1c-76e2-abb1-50e9427e666a)', { attributes: { raw_command: 'dbt build', eval_args: JSON.stringify({ command: 'build' }) } });
    const ictx = trace.setSpan(context.active(), inv);
    const phase = tracer.startSpan('Phase: RUN', { attributes: { phase: 'EXECUTION_PHASE_RUN' } }, ictx);
    const pctx = trace.setSpan(ictx, phase);
    const node = tracer.startSpan('Node evaluated (test.p.not_null_x)', {
      attributes: { unique_id: 'test.p.not_null_x', phase: 'EXECUTION_PHASE_RUN', node_outcome: 'NODE_OUTCOME_SUCCESS', node_test_detail: JSON.stringify({ failing_rows: 4, test_outcome: 'TEST_OUTCOME_FAILED' }) },
    }, pctx);
    logger.emit({ severityNumber: 17, severityText: 'ERROR', body: 'got 4 results', eventName: 'v1.public.events.fusion.log.LogMessage', attributes: { unique_id: 'test.p.not_null_x', code: 9002 }, context: trace.setSpan(pctx, node) });
    node.setStatus({ code: SpanStatusCode.OK });
    node.end();
    phase.end();
    inv.end();
    await provider.forceFlush();
    await loggerProvider.forceFlush();
    await provider.shutdown();
    await loggerProvider.shutdown();
    await rx.close();

    const traceId = inv.spanContext().traceId;
    expect(await db.all(`SELECT span_id, parent_span_id, kind FROM spans ORDER BY depth`)).toEqual([
      { span_id: inv.spanContext().spanId, parent_span_id: null, kind: 'invocation' },
      { span_id: phase.spanContext().spanId, parent_span_id: inv.spanContext().spanId, kind: 'phase' },
      { span_id: node.spanContext().spanId, parent_span_id: phase.spanContext().spanId, kind: 'node_evaluated' },
    ]);
    expect(await db.one(`SELECT trace_id, unique_id, node_outcome, test_outcome, failing_rows FROM nodes`)).toEqual({
      trace_id: traceId, unique_id: 'test.p.not_null_x', node_outcome: 'success', test_outcome: 'failed', failing_rows: 4,
    });
    expect(await db.one(`SELECT command FROM runs`)).toEqual({ command: 'build' });
    expect(await db.one(`SELECT span_id, severity_text, body, event_type, unique_id, code FROM logs`)).toEqual({
      span_id: node.spanContext().spanId, severity_text: 'ERROR', body: 'got 4 results', event_type: 'v1.public.events.fusion.log.LogMessage', unique_id: 'test.p.not_null_x', code: 9002,
    });
  });
});

describe('runlens receive: the database while receiving', () => {
  it('runs DuckDB on the threads asked for while receiving and restores the setting at close', async () => {
    const db = await openModel();
    cleanups.push(() => db.close());
    const before = await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`);
    const rx = new OtlpReceiver({ db, port: 0, dbThreads: 1 });
    await rx.start();
    expect(await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`)).toBe(1);
    await rx.close();
    expect(await db.scalar<number>(`SELECT current_setting('threads')::INTEGER`)).toBe(before);
  });
});

describe('runlens receive: the OTLP/HTTP protocol', () => {
  const tid = '5b8efff798038103d269b633813fc60c';
  const jsonRequest = {
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'dbt-fusion' } }] },
      scopeSpans: [{ scope: { name: 'dbt-fusion' }, spans: [
        { traceId: tid, spanId: 'eee19b7ec3c1b174', name: 'Node processed (model.p.a)', kind: 1, startTimeUnixNano: '1772073188904419000', endTimeUnixNano: 1772073189904419000,
          attributes: [{ key: 'unique_id', value: { stringValue: 'model.p.a' } }, { key: 'node_outcome', value: { stringValue: 'NODE_OUTCOME_ERROR' } }, { key: 'defined_at_line', value: { intValue: 3 } }],
          status: { code: 2, message: 'error' } },
        { traceId: 'nothex', spanId: 'x', name: 'bad', startTimeUnixNano: '1' },
      ] }],
    }],
  };

  it('accepts OTLP/JSON from a plain HTTP client and reports partial success', async () => {
    const { rx, db } = await startReceiver();
    const res = await fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(jsonRequest) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: 'resourceSpans[0].scopeSpans[0].spans[1].traceId: 32 hex digits expected, got "nothex"' } });
    await rx.flush(true);
    expect(await db.one(`SELECT trace_id, kind, node_outcome, duration_ms, status_code FROM spans`)).toEqual({
      trace_id: tid, kind: 'node_processed', node_outcome: 'error', duration_ms: 1000, status_code: 2,
    });
  });

  it('a batch that cannot be written is reported, and the next one lands (its transaction was rolled back)', async () => {
    const { rx, db } = await startReceiver({ flushIntervalMs: 60_000 });
    const post = (spanId: string) => {
      const body = structuredClone(jsonRequest);
      body.resourceSpans[0]!.scopeSpans[0]!.spans = [{ ...jsonRequest.resourceSpans[0]!.scopeSpans[0]!.spans[0]!, spanId }];
      return fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    };
    expect((await post('00000000000000a1')).status).toBe(200);
    // The insert inside the batch's transaction fails: the table it writes is gone for a moment.
    await db.run('ALTER TABLE record_rows RENAME TO record_rows_away');
    await expect(rx.flush(false)).rejects.toThrow(/record_rows/);
    await db.run('ALTER TABLE record_rows_away RENAME TO record_rows');
    expect((await post('00000000000000a2')).status).toBe(200);
    // the lost span sent again is stored: it was never in the model
    expect((await post('00000000000000a1')).status).toBe(200);
    await rx.flush(true);
    expect(await db.all(`SELECT span_id FROM spans ORDER BY span_id`)).toEqual([{ span_id: '00000000000000a1' }, { span_id: '00000000000000a2' }]);
  });

  it('gzip works; malformed protobuf 400, wrong content type 415, oversize and gzip bombs 413, a full queue 429 with Retry-After', async () => {
    const { rx } = await startReceiver({ maxBodyBytes: 64 * 1024, maxQueuedRecords: 1, flushIntervalMs: 60_000 });
    const post = (body: string | Uint8Array, headers: Record<string, string>, p = '/v1/traces') => fetch(`${rx.url}${p}`, { method: 'POST', headers, body });
    const T = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest');
    const pb = Buffer.from(T.encode(T.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: Buffer.from(tid, 'hex'), spanId: Buffer.from('eee19b7ec3c1b174', 'hex'), name: 'Phase: RUN', startTimeUnixNano: '1772073188904419000', endTimeUnixNano: '1772073189904419000' }] }] }] })).finish());

    const ok = await post(gzipSync(pb), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-protobuf');
    expect((await ok.arrayBuffer()).byteLength).toBe(0); // empty ExportTraceServiceResponse: full success

    const full = await post(pb, { 'content-type': 'application/x-protobuf' });
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toBe('1');
    await rx.flush(true);

    const bad = await post(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), { 'content-type': 'application/x-protobuf' });
    expect(bad.status).toBe(400);
    expect((await post('{"resourceSpans": 3}', { 'content-type': 'application/json' })).status).toBe(400);
    expect((await post('{oops', { 'content-type': 'application/json' })).status).toBe(400);
    expect((await post('hello', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(Buffer.alloc(128 * 1024), { 'content-type': 'application/x-protobuf' })).status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect((await post(bomb, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await post(Buffer.from('not gzip'), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })).status).toBe(400);
    // still serving after all that
    expect((await post(pb, { 'content-type': 'application/x-protobuf' })).status).toBe(200);
  });

  const spanWith = (spanId: string, extra: object = {}) => ({ ...jsonRequest.resourceSpans[0]!.scopeSpans[0]!.spans[0]!, spanId, ...extra });
  const requestOf = (spans: object[]) => ({ resourceSpans: [{ scopeSpans: [{ scope: { name: 'x' }, spans }] }] });
  const postJson = (rx: OtlpReceiver, body: object, contentType = 'application/json') =>
    fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': contentType }, body: JSON.stringify(body) });

  it('a span that cannot be stored is rejected with its reason; what was acknowledged beside it, in any request, is stored', async () => {
    const { rx, db } = await startReceiver({ flushIntervalMs: 60_000 });
    expect((await postJson(rx, requestOf([spanWith('00000000000000a1')]))).status).toBe(200);
    const res = await postJson(rx, requestOf([spanWith('00000000000000b1', { name: 5 }), spanWith('00000000000000b2')]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: 'resourceSpans[0].scopeSpans[0].spans[0].name: a string expected, got number' } });
    await rx.flush(true);
    expect(await db.all(`SELECT span_id FROM spans ORDER BY span_id`)).toEqual([{ span_id: '00000000000000a1' }, { span_id: '00000000000000b2' }]);
    expect(rx.stats).toMatchObject({ spans: 2, rejected: 1, lost: 0 });
  });

  it('a key written twice in a span is rejected naming it, as a JSONL line writing a key twice is refused; its neighbours are stored', async () => {
    const { rx, db } = await startReceiver({ flushIntervalMs: 60_000 });
    const twice = (edit: (span: string) => string) => {
      const text = JSON.stringify(requestOf([spanWith('00000000000000c1'), spanWith('00000000000000c2')]));
      const at = text.indexOf('"spanId":"00000000000000c2"');
      return text.slice(0, at) + edit(text.slice(at));
    };
    const KEY = 'key written twice (a reader may take either value)';
    const cases: [string, string][] = [
      [twice((t) => t.replace('"status":{"code":2,"message":"error"}', '"status":{"code":2,"message":"error","code":1}')), 'status.code'],
      [twice((t) => t.replace('{"stringValue":"NODE_OUTCOME_ERROR"}', '{"stringValue":"NODE_OUTCOME_ERROR","stringValue":"NODE_OUTCOME_SUCCESS"}')), 'attributes[1].value.stringValue'],
      [twice((t) => t.replace('{"key":"defined_at_line"', '{"key":"node_outcome","value":{"stringValue":"NODE_OUTCOME_SUCCESS"}},{"key":"defined_at_line"')), `attributes[2].key: ${KEY}: node_outcome`],
      [twice((t) => t.replace('{"key":"defined_at_line","value":{"intValue":3}}',
        '{"key":"node_test_detail","value":{"stringValue":"{\\"test_outcome\\":\\"TEST_OUTCOME_FAILED\\",\\"test_outcome\\":\\"TEST_OUTCOME_PASSED\\"}"}}')),
      `attributes[2].value.stringValue: ${KEY}: test_outcome`],
    ];
    for (const [body, said] of cases) {
      const res = await fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status, body).toBe(200);
      const reason = said.includes(KEY) ? said : `${said}: ${KEY}`;
      expect(await res.json(), body).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: `resourceSpans[0].scopeSpans[0].spans[1].${reason}` } });
    }
    // the list of spans itself written twice: no request to take
    const spansTwice = JSON.stringify(requestOf([spanWith('00000000000000d1')])).replace('"spans":[', '"spans":[],"spans":[');
    const res = await fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: spansTwice });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(`resourceSpans[0].scopeSpans[0].spans: ${KEY}`);
    await rx.flush(true);
    expect(await db.all(`SELECT DISTINCT span_id FROM spans ORDER BY span_id`)).toEqual([{ span_id: '00000000000000c1' }]);
  });

  it('with JSONL and Parquet outputs: a bad attribute key is rejected, never a 500 after storing; outputs and model hold the same spans', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'copy.jsonl');
    const parquet = path.join(dir, 'copy.parquet');
    const { rx, db } = await startReceiver({
      sinks: [new JsonlSink({ path: jsonl, append: false, level: 'trace' }), new ParquetSink({ path: parquet, level: 'trace' })],
    });
    const numericKey = spanWith('00000000000000c1', { attributes: [{ key: 7, value: { stringValue: 'x' } }] });
    const res = await postJson(rx, requestOf([numericKey, spanWith('00000000000000c2')]));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: 'resourceSpans[0].scopeSpans[0].spans[0].attributes[0].key: a string expected, got number' } });
    expect((await postJson(rx, requestOf([spanWith('00000000000000c3')]))).status).toBe(200);
    await rx.close();
    expect(rx.sinkErrors.size).toBe(0);
    const spans = `SELECT span_id, span_name, attributes::VARCHAR AS a FROM records WHERE record_type = 'SpanEnd' ORDER BY span_id`;
    const model = await db.all(spans);
    expect(model.map((r) => r.span_id)).toEqual(['00000000000000c2', '00000000000000c3']);
    expect(await db.scalar(`SELECT count(*)::INT FROM record_rows WHERE NOT json_valid(attributes::VARCHAR)`)).toBe(0);
    // the JSONL copy holds the records themselves; Parquet the same spans in the engine's typed columns
    const names = `SELECT span_id, span_name FROM spans ORDER BY span_id`;
    for (const [out, q] of [[jsonl, spans], [parquet, names]] as const) {
      const file = await openModel();
      cleanups.push(() => file.close());
      await loadPaths(file, [out]);
      expect(await file.all(q), out).toEqual(await db.all(q));
    }
  });

  it('a request sent again (a client retrying after a lost answer) is acknowledged and stored once, in the model and the outputs', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'copy.jsonl');
    const { rx, db } = await startReceiver({ sinks: [new JsonlSink({ path: jsonl, append: false, level: 'trace' })] });
    const logs = {
      resourceLogs: [{ scopeLogs: [{ scope: { name: 'x' }, logRecords: [
        { traceId: tid, spanId: 'eee19b7ec3c1b174', timeUnixNano: '1772073189000000000', severityNumber: 17, body: { stringValue: 'Database Error in model a' } },
        { traceId: tid, spanId: 'eee19b7ec3c1b174', timeUnixNano: '1772073189000000001', severityNumber: 9, body: { stringValue: 'done' } },
      ] }] }],
    };
    const postLogs = () => fetch(`${rx.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(logs) });
    for (let i = 0; i < 2; i++) {
      expect((await postJson(rx, requestOf([spanWith('00000000000000d1')]))).status).toBe(200);
      const res = await postLogs();
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({});
    }
    // one more log of the same span, at another time: a new record
    logs.resourceLogs[0]!.scopeLogs[0]!.logRecords = [{ ...logs.resourceLogs[0]!.scopeLogs[0]!.logRecords[1]!, timeUnixNano: '1772073189000000002' }];
    expect((await postLogs()).status).toBe(200);
    await rx.close();
    const q = `SELECT record_type, span_id, time_ns::VARCHAR AS t, body FROM records WHERE record_type <> 'SpanStart' ORDER BY ALL`;
    const stored = await db.all(q);
    expect(stored.map((r) => r.body)).toEqual(['Database Error in model a', 'done', 'done', null]);
    const file = await openModel();
    cleanups.push(() => file.close());
    await loadPaths(file, [jsonl]);
    expect(await file.all(q)).toEqual(stored);
  });

  it('--jsonl: a log record names the span its span_id names when that span arrived before it; a later one cannot be named', async () => {
    const dir = tempDir();
    const jsonl = path.join(dir, 'copy.jsonl');
    const { rx } = await startReceiver({ sinks: [new JsonlSink({ path: jsonl, append: false, level: 'trace' })] });
    const logOf = (spanId: string, t: string) => ({ traceId: tid, spanId, timeUnixNano: t, severityNumber: 9, body: { stringValue: `under ${spanId}` } });
    const postLogs = (records: object[]) =>
      fetch(`${rx.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ scope: { name: 'x' }, logRecords: records }] }] }) });
    expect((await postJson(rx, requestOf([spanWith('00000000000000e1', { name: 'Node processed (model.p.e1)' })]))).status).toBe(200);
    expect((await postLogs([logOf('00000000000000e1', '1772073189000000000'), logOf('00000000000000e2', '1772073189000000001')])).status).toBe(200);
    expect((await postJson(rx, requestOf([spanWith('00000000000000e2', { name: 'Node processed (model.p.e2)' })]))).status).toBe(200);
    expect((await postLogs([logOf('00000000000000e2', '1772073189000000002')])).status).toBe(200);
    await rx.close();
    const logs = readFileSync(jsonl, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { record_type: string; span_id: string; span_name: string | null; body: string })
      .filter((r) => r.record_type === 'LogRecord');
    expect(logs.map((r) => [r.span_id, r.span_name])).toEqual([
      ['00000000000000e1', 'Node processed (model.p.e1)'],
      ['00000000000000e2', null],
      ['00000000000000e2', 'Node processed (model.p.e2)'],
    ]);
  });

  it('media types match without regard to case and with parameters', async () => {
    const { rx, db } = await startReceiver();
    for (const [i, type] of ['APPLICATION/JSON; charset=utf-8', 'application/json;charset=UTF-8', 'Application/Json'].entries()) {
      const res = await postJson(rx, requestOf([spanWith(`00000000000000d${i}`)]), type);
      expect(res.status, type).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({});
    }
    const bad = await postJson(rx, { resourceSpans: 3 }, 'Application/JSON; charset=utf-8');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 3 });
    await rx.flush(true);
    expect(await db.scalar(`SELECT count(*)::INT FROM spans`)).toBe(3);
  });

  it('protobuf with field number 0, an invalid or mismatched wire type, or a string that is not UTF-8 is 400, not a 200', async () => {
    const { rx } = await startReceiver();
    const post = (bytes: number[]) => fetch(`${rx.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: Buffer.from(bytes) });
    for (const bytes of [
      [0x00, 0x01], // field 0, varint
      [0x0a, 0x02, 0x00, 0x01], // field 0 inside a ResourceSpans
      [0x0a, 0x02, 0x0f, 0x00], // wire type 7 inside a ResourceSpans
      [0x0e, 0x00], // wire type 6
      [0x0b, 0x14], // a group ended by another field's end tag
      [0x0a, 0x06, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x00], // a resource attribute's key (a string) sent as a varint
    ]) {
      const res = await post(bytes);
      expect(res.status, Buffer.from(bytes).toString('hex')).toBe(400);
    }
    // a span name that is not UTF-8 (it would be stored with U+FFFD in place of the byte)
    const T = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest');
    const span = { traceId: Buffer.from(tid, 'hex'), spanId: Buffer.from('eee19b7ec3c1b174', 'hex'), name: 'Phase: RUN', startTimeUnixNano: '1772073188904419000' };
    const pb = Buffer.from(T.encode(T.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish());
    expect((await post([...pb])).status).toBe(200);
    pb[pb.indexOf('Phase') + 1] = 0xff;
    const notUtf8 = await post([...pb]);
    expect(notUtf8.status).toBe(400);
    expect(Buffer.from(await notUtf8.arrayBuffer()).toString('latin1')).toMatch(/not UTF-8/);
    // what the specification allows still passes: an empty request, and unknown fields (skipped)
    expect((await post([])).status).toBe(200);
    expect((await post([0xf8, 0x01, 0x01])).status).toBe(200);
  });

  it('a batch the database refuses anyway loses only the records it refuses: the other requests, and the rest of that request, are written', async () => {
    const { rx, db } = await startReceiver({ flushIntervalMs: 60_000 });
    // A constraint the converter knows nothing about stands for a record the checks let through by mistake.
    const ddl = await db.scalar<string>(`SELECT sql FROM duckdb_tables() WHERE table_name = 'record_rows'`);
    await db.run('ALTER TABLE record_rows RENAME TO record_rows_unchecked');
    await db.run(ddl!.replace(/\);?\s*$/, `, CHECK (span_name IS DISTINCT FROM 'refused by the database'))`));
    expect((await postJson(rx, requestOf([spanWith('00000000000000e1'), spanWith('00000000000000e2', { name: 'refused by the database' }), spanWith('00000000000000e3')]))).status).toBe(200);
    expect((await postJson(rx, requestOf([spanWith('00000000000000f1')]))).status).toBe(200);
    await expect(rx.flush(false)).rejects.toThrow(/1 acknowledged record could not be written.*refused by the database|CHECK/);
    expect(rx.stats.lost).toBe(1);
    await rx.flush(true);
    expect(await db.all(`SELECT span_id FROM record_rows ORDER BY span_id`)).toEqual([
      { span_id: '00000000000000e1' }, { span_id: '00000000000000e3' }, { span_id: '00000000000000f1' },
    ]);
  });

  it('a model that refuses the write that closes it (a full disk) is said as not written in full, never thrown from close', async () => {
    const { rx, db } = await startReceiver();
    expect((await postJson(rx, requestOf([spanWith('00000000000000a1')]))).status).toBe(200);
    await rx.flush(true);
    // the close's own write (the source's record count) fails, as a commit does on a full disk
    const run = db.run.bind(db);
    (db as { run: Db['run'] }).run = (sql, params) =>
      (sql.startsWith('UPDATE files SET records') ? Promise.reject(new Error('Failed to commit: Could not write file "m.duckdb.wal": File too large')) : run(sql, params));
    await expect(rx.close()).resolves.toBeUndefined();
    expect(rx.reasons.closing).toMatch(/File too large/);
  });
});


describe('runlens receive: a span without an end', () => {
  const CLEAN = path.join(ROOT, 'samples/clean-build.jsonl');
  const records = readFileSync(CLEAN, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as JsonlRecord);
  const invocation = records.find((r): r is SpanEndRecord => r.record_type === 'SpanEnd' && / invocation \(/.test(r.span_name))!;

  for (const [label, end] of [['absent', undefined], ['"0"', '0']] as const) {
    it(`endTimeUnixNano ${label}: kept as a span that never ended (as a file holding only its SpanStart), so the run is incomplete`, async () => {
      const dir = tempDir();
      const copy = path.join(dir, 'copy.jsonl');
      const { rx, db } = await startReceiver({ sinks: [new JsonlSink({ path: copy, append: false, level: 'trace' })] });
      const req = tracesJson(records.filter((r): r is SpanEndRecord => r.record_type === 'SpanEnd'));
      const inv = req.resourceSpans![0]!.scopeSpans[0]!.spans.find((s) => s.spanId === invocation.span_id)!;
      if (end === undefined) delete inv.endTimeUnixNano;
      else inv.endTimeUnixNano = end;
      expect(await postOtlpJson(rx.url, 'traces', req)).toEqual({ status: 200, body: {} });
      await rx.close();

      // the same run as a file: the invocation's SpanEnd left out, its SpanStart kept
      const file = await openModel();
      cleanups.push(() => file.close());
      await loadPaths(file, [writeLines(dir, 'unended.jsonl', records.filter((r) => r !== invocation && r.record_type !== 'LogRecord'))]);
      const spans = `SELECT span_id, kind, ended, start_ns::VARCHAR s, end_ns::VARCHAR e, duration_ms FROM spans ORDER BY span_id`;
      const runs = `SELECT trace_id, ended, end_ns, nodes, success, error, failed FROM runs`;
      expect(await db.one(`SELECT ended, end_ns FROM spans WHERE span_id = '${invocation.span_id}'`)).toEqual({ ended: false, end_ns: null });
      expect(await db.one(`SELECT ended FROM runs`)).toEqual({ ended: false });
      expect(await db.all(spans)).toEqual(await file.all(spans));
      expect(await db.all(runs)).toEqual(await file.all(runs));
      // the JSONL copy holds the SpanStart alone, and builds the same model
      const out = readFileSync(copy, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as JsonlRecord);
      expect(out.filter((r) => r.span_id === invocation.span_id).map((r) => r.record_type)).toEqual(['SpanStart']);
      const fromCopy = await openModel();
      cleanups.push(() => fromCopy.close());
      await loadPaths(fromCopy, [copy]);
      expect(await fromCopy.all(runs)).toEqual(await db.all(runs));
    });
  }
});

describe('runlens receive: log records alike but distinct', () => {
  it('two logs of one request with the same span, time and body but their own event ids and attributes are both kept; the request sent again is a copy', async () => {
    const dir = tempDir();
    const copy = path.join(dir, 'copy.jsonl');
    const { rx, db } = await startReceiver({ sinks: [new JsonlSink({ path: copy, append: false, level: 'trace' })] });
    const log = (eventId: string, node: string) => ({
      traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', timeUnixNano: '1772073189000000000', severityNumber: 17,
      body: { stringValue: 'Database Error' }, eventName: 'v1.public.events.fusion.log.LogMessage',
      attributes: [{ key: 'event_id', value: { stringValue: eventId } }, { key: 'unique_id', value: { stringValue: node } }],
    });
    const req = { resourceLogs: [{ scopeLogs: [{ scope: { name: 'x' }, logRecords: [log('e-1', 'model.p.a'), log('e-2', 'model.p.b')] }] }] };
    expect(await postOtlpJson(rx.url, 'logs', req)).toEqual({ status: 200, body: {} });
    expect(await postOtlpJson(rx.url, 'logs', req)).toEqual({ status: 200, body: {} });
    await rx.close();
    expect(rx.stats).toMatchObject({ logs: 2, repeated: 2 });
    const q = `SELECT event_id, unique_id FROM logs ORDER BY event_id`;
    expect(await db.all(q)).toEqual([{ event_id: 'e-1', unique_id: 'model.p.a' }, { event_id: 'e-2', unique_id: 'model.p.b' }]);
    const file = await openModel();
    cleanups.push(() => file.close());
    await loadPaths(file, [copy]);
    expect(await file.all(q)).toEqual(await db.all(q));
  });
});
