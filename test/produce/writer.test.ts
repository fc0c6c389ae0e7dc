import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededIds } from '../../src/produce/ids.js';
import { serializeRecord, type Attributes, type JsonlRecord, type SpanEndRecord } from '../../src/produce/record.js';
import { JsonlSink } from '../../src/produce/sinks/jsonl.js';
import { ParquetSink } from '../../src/produce/sinks/parquet.js';
import type { TelemetrySink } from '../../src/produce/sinks/types.js';
import { TelemetryWriter } from '../../src/produce/writer.js';
import { runCli } from '../helpers/cli.js';
import { samplesPresent, sampleLines } from './helpers.js';

class MemorySink implements TelemetrySink {
  records: JsonlRecord[] = [];
  constructor(readonly name: string, readonly minSeverity = 1) {}
  write(r: JsonlRecord) {
    this.records.push(r);
  }
  async close() {}
}

function realRecords(): JsonlRecord[] {
  return sampleLines('forwarder-otel-preview120.jsonl').map((l) => JSON.parse(l) as JsonlRecord);
}

const T0 = 1_772_073_188_904_419_000n;

describe.skipIf(!samplesPresent)('records compared with the real engine', () => {
  it('a data test that ran and failed: NodeProcessed and NodeEvaluated attributes equal the real ones', async () => {
    const real = realRecords();
    const uid = 'test.jaffle_shop.accepted_values_customers_customer_type__new__returning.d299a3800c';
    const realNp = real.find((r) => r.record_type === 'SpanEnd' && r.span_name === `Node processed (${uid})`) as SpanEndRecord;
    const realEv = real.find((r) => r.record_type === 'SpanEnd' && r.span_name === `Node evaluated (${uid})` && r.attributes.phase === 'EXECUTION_PHASE_RUN') as SpanEndRecord;
    const sink = new MemorySink('mem');
    const w = new TelemetryWriter({ sinks: [sink], ids: seededIds(1) });
    const inv = w.startInvocation({ command: 'build', at: T0 });
    const run = inv.startPhase('run', { nodeCount: 48, at: T0 });
    const node = inv.startNode({
      uniqueId: uid, name: 'accepted_values_customers_customer_type__new__returning', nodeType: 'test', materialization: 'test',
      database: 'infra-dev-281205', schema: 'dbt_dbt_test__audit', identifier: 'accepted_values_customers_customer_type__new__returning',
      relativePath: 'models/marts/customers.yml', definedAtLine: 31, definedAtCol: 13,
    }, { at: T0 });
    const ev = node.evaluate(run, { at: T0 });
    ev.end({ outcome: 'success', test: { outcome: 'failed', failingRows: 2 }, rowsAffected: 1 }, { at: T0 + 2_962_000_000n });
    node.end(undefined, { at: T0 + 3_000_000_000n });
    await w.close();
    const np = sink.records.find((r) => r.record_type === 'SpanEnd' && r.span_name === realNp.span_name) as SpanEndRecord;
    const ev2 = sink.records.find((r) => r.record_type === 'SpanEnd' && r.span_name === realEv.span_name) as SpanEndRecord;
    expect(np.attributes).toEqual(realNp.attributes);
    expect(np.status).toEqual(realNp.status);
    expect(np.links).toBeNull();
    expect(ev2.attributes).toEqual(realEv.attributes);
    expect(ev2.links).toEqual([{ trace_id: ev2.trace_id, span_id: np.span_id, attributes: {} }]);
    expect(ev2.severity_text).toBe(realEv.severity_text);
    expect(ev2.parent_span_id).toBe(run.spanId);
  });

  it('an upstream skip and an internal error look like the real ones', async () => {
    const real = realRecords();
    const realSkip = real.find((r) => r.record_type === 'SpanEnd' && r.span_name === 'Node processed (model.jaffle_shop.stg_locations)') as SpanEndRecord;
    const realErr = real.find((r) => r.record_type === 'SpanEnd' && r.span_name === 'Node processed (unit_test.jaffle_shop.stg_locations.test_does_location_opened_at_trunc_to_date)') as SpanEndRecord;
    const sink = new MemorySink('mem');
    const w = new TelemetryWriter({ sinks: [sink], ids: seededIds(2) });
    const inv = w.startInvocation({ command: 'build', at: T0 });
    const render = inv.startPhase('render', { nodeCount: 48, at: T0 });
    const unit = inv.startNode({ uniqueId: realErr.attributes.unique_id as string, name: 'test_does_location_opened_at_trunc_to_date', nodeType: 'unit_test', materialization: 'unit', database: 'infra-dev-281205', schema: 'dbt', identifier: 'stg_locations', relativePath: 'models/staging/stg_locations.yml' }, { at: T0 });
    unit.evaluate(render, { at: T0 }).end({ outcome: 'error', errorType: 'internal' }, { at: T0 + 366_000_000n });
    unit.end(undefined, { at: T0 + 367_000_000n });
    const run = inv.startPhase('run', { nodeCount: 48, at: T0 + 400_000_000n });
    const m = inv.startNode({ uniqueId: 'model.jaffle_shop.stg_locations', name: 'stg_locations', nodeType: 'model', materialization: 'view', database: 'infra-dev-281205', schema: 'dbt', identifier: 'stg_locations', relativePath: 'models/staging/stg_locations.sql', checksum: realSkip.attributes.node_checksum as string }, { at: T0 });
    m.evaluate(run, { at: T0 + 500_000_000n }).end({ outcome: 'skipped', upstreamUniqueId: realErr.attributes.unique_id as string }, { at: T0 + 500_075_000n });
    m.end(undefined, { at: T0 + 600_000_000n });
    await w.close();
    const byName = (n: string) => sink.records.find((r) => r.record_type === 'SpanEnd' && r.span_name === n) as SpanEndRecord;
    const skip = byName(realSkip.span_name);
    const err = byName(realErr.span_name);
    expect(skip.status).toEqual(realSkip.status);
    expect(err.status).toEqual(realErr.status);
    const omit = (a: Attributes, ...k: string[]) => Object.fromEntries(Object.entries(a).filter(([x]) => !k.includes(x)));
    // durations differ by construction; everything else matches
    expect(omit(skip.attributes, 'duration_ms')).toEqual(omit(realSkip.attributes, 'duration_ms'));
    expect(omit(err.attributes, 'duration_ms', 'node_checksum')).toEqual(omit(realErr.attributes, 'duration_ms', 'node_checksum'));
    expect(err.attributes.duration_ms).toBe('366');
  });

  it('every record type and attribute the writer emits has the real shape (keys, JSON types, envelope order)', async () => {
    const real = realRecords();
    const shapes = new Map<string, Map<string, string>>();
    const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    for (const r of real) {
      const k = `${r.record_type} ${r.event_type}`;
      const m = shapes.get(k) ?? shapes.set(k, new Map()).get(k)!;
      for (const [a, v] of Object.entries(r.attributes)) m.set(a, typeOf(v));
    }
    const sink = new MemorySink('mem');
    const w = new TelemetryWriter({ sinks: [sink], ids: seededIds(3) });
    const { buildProject, simulateRun } = await import('../../src/produce/generate/index.js');
    await simulateRun(w, buildProject(80, 3), { seed: 3, runIndex: 0, failRate: 0.1, cacheRate: 0, threads: 4, start: T0, adapterType: 'bigquery', version: '2.0.0-preview.120', detail: true });
    await w.close();
    const realOrder = new Map(real.map((r) => [r.record_type, Object.keys(r).join(',')]));
    // keys the real sample does not happen to contain but the schema defines
    const extra = new Set(['node_cache_detail', 'node_evaluation_detail', 'query_error_adapter_message', 'query_error_vendor_code', 'description', 'is_print', 'code']);
    let compared = 0;
    for (const r of sink.records) {
      expect(Object.keys(r).join(',')).toBe(realOrder.get(r.record_type));
      const m = shapes.get(`${r.record_type} ${r.event_type}`);
      expect(m, `${r.record_type} ${r.event_type} exists in the real sample`).toBeDefined();
      for (const [a, v] of Object.entries(r.attributes)) {
        if (extra.has(a) && !m!.has(a)) continue;
        expect(m!.get(a), `${r.event_type} attribute ${a}`).toBe(typeOf(v));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});

describe('TelemetryWriter', () => {
  it('re-points parents and log spans past spans a sink filters out, like the engine', async () => {
    const all = new MemorySink('all', 1);
    const info = new MemorySink('info', 9);
    const w = new TelemetryWriter({ sinks: [all, info], ids: seededIds(4) });
    const inv = w.startInvocation({ command: 'run', at: T0 });
    const run = inv.startPhase('run', { at: T0 });
    const n = inv.startNode({ uniqueId: 'model.p.m', nodeType: 'model' }, { at: T0 });
    const ev = n.evaluate(run, { at: T0 });
    ev.message('boom', { severity: 'error', at: T0 + 5n });
    const q = ev.startQuery({ sql: 'select 1', adapterType: 'duckdb' }, { at: T0 + 1n });
    q.end({ at: T0 + 2n });
    ev.end({ outcome: 'error' }, { at: T0 + 6n });
    n.end(undefined, { at: T0 + 7n });
    run.end({ at: T0 + 8n });
    inv.end({ at: T0 + 9n });
    await w.close();
    expect(all.records.some((r) => r.event_type.endsWith('QueryExecuted'))).toBe(true);
    expect(info.records.some((r) => r.event_type.endsWith('QueryExecuted') || r.event_type.endsWith('NodeEvaluated'))).toBe(false);
    const log = info.records.find((r) => r.record_type === 'LogRecord')!;
    expect(log.span_id).toBe(run.spanId);
    expect(log.span_name).toBe('Phase: RUN');
    const allLog = all.records.find((r) => r.record_type === 'LogRecord')!;
    expect(allLog.span_id).toBe(ev.spanId);
  });

  it('a sink that throws is reported once and the others get every record', async () => {
    const good = new MemorySink('good');
    let calls = 0;
    const bad: TelemetrySink = { name: 'bad', minSeverity: 1, write() { calls++; throw new Error('disk full'); }, async close() {} };
    const reported: string[] = [];
    const w = new TelemetryWriter({ sinks: [bad, good], ids: seededIds(5), onSinkError: (s, e) => reported.push(`${s}: ${e.message}`) });
    const inv = w.startInvocation({ command: 'build', at: T0 });
    inv.startPhase('parse', { at: T0 }).end({ at: T0 + 1n });
    inv.end({ at: T0 + 2n });
    await w.close();
    expect(reported).toEqual(['bad: disk full']);
    expect(calls).toBe(1);
    expect(good.records).toHaveLength(6);
  });

  it('ids: trace_id is the invocation UUIDv7 without dashes, span ids 16 hex, event ids UUIDv7', async () => {
    const s = new MemorySink('m');
    const w = new TelemetryWriter({ sinks: [s] });
    const inv = w.startInvocation({ command: 'build' });
    inv.progress('dbt-fusion', '2.0.0');
    inv.end();
    await w.close();
    expect(inv.invocationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(inv.traceId).toBe(inv.invocationId.replace(/-/g, ''));
    for (const r of s.records) {
      expect(r.span_id).toMatch(/^[0-9a-f]{16}$/);
      if (r.record_type === 'LogRecord') expect(r.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    }
    const given = new TelemetryWriter({ sinks: [] }).startInvocation({ command: 'run', invocationId: '019c97ca-fe1c-76e2-abb1-50e9427e666a' });
    expect(given.traceId).toBe('019c97cafe1c76e2abb150e9427e666a');
  });

  it('the JSONL sink writes records as events occur: a quiet run shows them without closing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-jsonl-'));
    try {
      const path = join(dir, 'otel.jsonl');
      const w = new TelemetryWriter({ sinks: [new JsonlSink({ path })], ids: seededIds(3) });
      const inv = w.startInvocation({ command: 'build', at: T0 });
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && !(existsSync(path) && readFileSync(path, 'utf8').split('\n').length > 2)) await new Promise((r) => setTimeout(r, 50));
      const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
      expect(lines.map((l) => JSON.parse(l).event_type)).toEqual(['v1.public.events.fusion.process.Process', 'v1.public.events.fusion.invocation.Invocation']);
      inv.end({ at: T0 + 1n });
      await w.close();
      expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a JSONL sink alone (attributes as JSON text, no objects) writes the bytes it writes beside an object-reading sink', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-jsonl-'));
    try {
      // Text that needs escaping, non-ASCII and a surrogate pair, in names, bodies and attributes.
      const scenario = async (sinks: TelemetrySink[]) => {
        const w = new TelemetryWriter({ sinks, ids: seededIds(8) });
        const inv = w.startInvocation({ command: 'build', at: T0, evalArgs: { select: ['a "b"', 'ü'] } });
        const run = inv.startPhase('run', { nodeCount: 1, at: T0 });
        const n = inv.startNode({ uniqueId: 'model.p.m\\"x"', nodeType: 'model', relativePath: 'models/ü.sql' }, { at: T0 });
        const ev = n.evaluate(run, { at: T0 });
        ev.message('line one\nline "two" \u{1F680}', { severity: 'error', at: T0 + 1n });
        ev.compiledCode('select \'\t\' as "c"', 'models/m.sql', { at: T0 + 2n });
        const q = ev.startQuery({ sql: 'select 1 -- é', adapterType: 'duckdb' }, { at: T0 + 3n });
        q.end({ outcome: 'error', errorMessage: 'bad\u0001', at: T0 + 4n });
        ev.end({ outcome: 'error', errorMessage: 'Database Error "x"' }, { at: T0 + 5n });
        n.end(undefined, { at: T0 + 6n });
        run.end({ at: T0 + 7n });
        inv.end({ at: T0 + 8n });
        await w.close();
      };
      const alone = join(dir, 'alone.jsonl');
      const beside = join(dir, 'beside.jsonl');
      const mem = new MemorySink('mem');
      await scenario([new JsonlSink({ path: alone })]);
      await scenario([new JsonlSink({ path: beside }), mem]);
      const text = readFileSync(alone, 'utf8');
      expect(readFileSync(beside, 'utf8')).toBe(text);
      const lines = text.trimEnd().split('\n');
      expect(lines).toHaveLength(mem.records.length);
      // the JSON-text path serializes what the object path holds, in the engine's bytes
      expect(lines).toEqual(mem.records.map((r) => serializeRecord(r)));
      expect(lines.map((l) => JSON.parse(l))).toEqual(mem.records);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('close() with spans still open (a finally block after a crash)', () => {
  /** The probe's run: a phase and two nodes started, one node ended, then close(). */
  async function crashedRun(sinks: TelemetrySink[]): Promise<bigint> {
    let t = T0;
    const at = () => (t += 1_000_000n);
    const w = new TelemetryWriter({ sinks, ids: seededIds(1) });
    const inv = w.startInvocation({ command: 'build', at: at() });
    const run = inv.startPhase('run', { nodeCount: 2, at: at() });
    const a = inv.startNode({ uniqueId: 'model.p.a', nodeType: 'model' }, { at: at() });
    a.evaluate(run, { at: at() }).end({ outcome: 'success' }, { at: at() });
    a.end(undefined, { at: at() });
    const b = inv.startNode({ uniqueId: 'model.p.b', nodeType: 'model' }, { at: at() });
    b.evaluate(run, { at: at() }).startQuery({ sql: 'select 1', adapterType: 'duckdb' }, { at: at() });
    await w.close();
    return t;
  }

  it('ends every open span: the open node canceled, the phase and the invocation in error, interrupted', async () => {
    const s = new MemorySink('m');
    await crashedRun([s]);
    const ends = s.records.filter((r): r is SpanEndRecord => r.record_type === 'SpanEnd');
    const starts = s.records.filter((r) => r.record_type === 'SpanStart');
    expect(ends.map((r) => r.span_id).sort()).toEqual(starts.map((r) => r.span_id).sort());
    const end = (name: string) => ends.find((r) => r.span_name === name)!;
    expect(end('dbt invocation (' + String(ends.find((r) => r.span_name.startsWith('dbt invocation'))!.attributes.invocation_id) + ')').status).toEqual({ message: expect.stringMatching(/interrupted/i), code: 2 });
    const phase = ends.find((r) => r.span_name.startsWith('Phase: RUN'))!;
    expect(phase.status).toEqual({ message: expect.stringMatching(/interrupted/i), code: 2 });
    expect(end('Node processed (model.p.b)').attributes.node_outcome).toBe('NODE_OUTCOME_CANCELED');
    expect(end('Node evaluated (model.p.b)').attributes.node_outcome).toBe('NODE_OUTCOME_CANCELED');
    expect(end('Query executed (model.p.b)').attributes.query_outcome).toBe('QUERY_OUTCOME_CANCELED');
    // the node that ended keeps its outcome; children end before their parents
    expect(end('Node processed (model.p.a)').attributes.node_outcome).toBe('NODE_OUTCOME_SUCCESS');
    const order = ends.map((r) => r.span_name);
    expect(order.indexOf('Query executed (model.p.b)')).toBeLessThan(order.indexOf('Node evaluated (model.p.b)'));
    expect(order.indexOf('Node evaluated (model.p.b)')).toBeLessThan(order.indexOf('Node processed (model.p.b)'));
    expect(order.findIndex((n) => n.startsWith('dbt invocation'))).toBe(order.length - 2);
  });

  it('a run with explicit times ends at the last time it used, not on the wall clock', async () => {
    const s = new MemorySink('m');
    const last = await crashedRun([s]);
    const times = s.records.flatMap((r) => (r.record_type === 'SpanEnd' ? [BigInt(r.end_time_unix_nano)] : []));
    for (const t of times) expect(t).toBeLessThanOrEqual(last);
    const inv = s.records.find((r): r is SpanEndRecord => r.record_type === 'SpanEnd' && r.event_type.endsWith('invocation.Invocation'))!;
    expect(BigInt(inv.end_time_unix_nano)).toBe(last);
  });

  it('the gate fails such a run and runs says it failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-crash-'));
    try {
      const path = join(dir, 'otel.jsonl');
      await crashedRun([new JsonlSink({ path })]);
      const gate = runCli(['gate', path]);
      expect(gate.code).toBe(1);
      const runs = JSON.parse(runCli(['query', '--sql', 'SELECT ended, failed, status_message FROM runs', path, '--format', 'json']).stdout);
      expect(runs).toEqual([{ ended: true, failed: true, status_message: expect.stringMatching(/interrupted/i) }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run whose spans all ended but the invocation: close() ends it as usual, at its last time', async () => {
    const s = new MemorySink('m');
    const w = new TelemetryWriter({ sinks: [s], ids: seededIds(2) });
    const inv = w.startInvocation({ command: 'build', at: T0 });
    inv.startPhase('run', { at: T0 + 5n }).end({ at: T0 + 9n });
    await w.close();
    const end = s.records.find((r): r is SpanEndRecord => r.record_type === 'SpanEnd' && r.event_type.endsWith('invocation.Invocation'))!;
    expect(end.status).toEqual({ message: null, code: 1 });
    expect(end.end_time_unix_nano).toBe(String(T0 + 9n));
  });
});

describe('the Parquet sink (generate, migrate and record -o x.parquet)', () => {
  it('a record the layout cannot hold batches after the first fails the close, and leaves no file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runlens-parquet-sink-'));
    try {
      const lines = readFileSync(join(import.meta.dirname, '../../samples/clean-build.jsonl'), 'utf8').trimEnd().split('\n');
      const records = lines.map((l) => JSON.parse(l) as JsonlRecord);
      const late = records.findLastIndex((r) => r.record_type === 'SpanEnd');
      (records[late] as SpanEndRecord).status = { message: null, code: 2 ** 32 };
      const out = join(dir, 'late.parquet');
      // batches of 4 records: the bad one is reached long after the first batch went to the writer
      const sink = new ParquetSink({ path: out, level: 'trace', batchRows: 4 });
      for (const r of records) {
        if (sink.error) break;
        sink.write(r);
        await sink.drain();
      }
      await expect(sink.close()).rejects.toThrow(/status_code: 4294967296 does not fit/);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
