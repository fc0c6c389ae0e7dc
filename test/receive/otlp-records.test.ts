/** OTLP requests (protobufjs-decoded or OTLP/JSON) -> the engine's JSONL record and attribute shapes. */
import { describe, expect, it } from 'vitest';
import { logsToRecords, spansToRecords, spansToRows } from '../../src/ingest/otlp-records.js';
import { otlpRoot, type OtlpLogsRequest, type OtlpTraceRequest } from '../../src/otlp/decode.js';
import { sortedJson } from '../../src/produce/record.js';
import { hexSpanId } from '../../src/store/live.js';

const decodeTraces = (b: Buffer) =>
  otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest').decode(b) as unknown as OtlpTraceRequest;

const TID = '5b8efff798038103d269b633813fc60c';
const hex = (s: string) => Buffer.from(s, 'hex');

function traces(spans: object[]): Buffer {
  const T = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest');
  return Buffer.from(T.encode(T.fromObject({ resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'dbt-fusion' } }] }, scopeSpans: [{ scope: { name: 'x' }, spans }] }] })).finish());
}

const kv = (key: string, value: object) => ({ key, value });

describe('OTLP protobuf -> records', () => {
  it('maps every AnyValue kind, nested JSON text, code locations, repeated keys and event_type', () => {
    const span = {
      traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), parentSpanId: hex('0000000000000000'), name: 'Node evaluated (test.p.t)', kind: 1,
      traceState: 'x=1', startTimeUnixNano: '1772073188904419000', endTimeUnixNano: '1772073189904419000',
      attributes: [
        kv('small', { intValue: 7 }), kv('neg', { intValue: -3 }), kv('big', { intValue: '9007199254740993' }), kv('i32max', { intValue: 2 ** 31 }),
        kv('d', { doubleValue: 1.5 }), kv('b', { boolValue: true }), kv('bytes', { bytesValue: Buffer.from('hi') }),
        kv('arr', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }, {}] } }),
        kv('map', { kvlistValue: { values: [kv('code.file.path', { stringValue: 'f.sql' }), kv('k', { stringValue: '{"not":"parsed"}' })] } }),
        kv('node_test_detail', { stringValue: '{"failing_rows": 4, "test_outcome": "TEST_OUTCOME_FAILED"}' }),
        kv('broken', { stringValue: '{nope' }), kv('sql', { stringValue: '[1]' }), kv('empty', {}),
        kv('code.file.path', { stringValue: 'models/a.sql' }), kv('code.line.number', { intValue: 12 }),
        kv('dup', { stringValue: 'first' }), kv('dup', { stringValue: 'last' }),
        kv('event_type', { stringValue: 'v1.public.events.fusion.node.NodeEvaluated' }),
      ],
      events: [{ timeUnixNano: '1', name: 'ignored' }],
      links: [{ traceId: hex(TID), spanId: hex('1111111111111111'), attributes: [kv('n', { intValue: 1 })] }],
      status: { code: 2, message: 'boom' },
    };
    const request = decodeTraces(traces([span, { traceId: hex(TID), spanId: Buffer.alloc(0), name: 'no id', startTimeUnixNano: '1' }]));
    const { records, rejected } = spansToRecords(request);
    expect(rejected).toBe(1);
    expect(records.length).toBe(1);
    const r = records[0]!;
    expect(r).toMatchObject({
      record_type: 'SpanEnd', trace_id: TID, span_id: 'eee19b7ec3c1b174', parent_span_id: null, span_name: 'Node evaluated (test.p.t)',
      start_time_unix_nano: '1772073188904419000', end_time_unix_nano: '1772073189904419000', event_type: 'v1.public.events.fusion.node.NodeEvaluated',
      status: { code: 2, message: 'boom' }, links: [{ trace_id: TID, span_id: '1111111111111111', attributes: { n: 1 } }],
    });
    expect(r.attributes).toEqual({
      small: 7, neg: -3, big: '9007199254740993', i32max: '2147483648', d: 1.5, b: true, bytes: Buffer.from('hi').toString('base64'),
      arr: ['a', 1, null], map: { file: 'f.sql', k: '{"not":"parsed"}' },
      node_test_detail: { failing_rows: 4, test_outcome: 'TEST_OUTCOME_FAILED' }, broken: '{nope', sql: '[1]', empty: null,
      file: 'models/a.sql', line: 12, dup: 'last',
    });
    // handed to DuckDB as columns: ids as the integers of their 8 bytes, attributes as engine-order JSON
    const row = spansToRows(request).rows.row(0);
    expect(hexSpanId(row.span_id)).toBe('eee19b7ec3c1b174');
    expect(row.parent_span_id).toBeNull();
    expect(row.start_ns).toBe(1772073188904419000n);
    expect(JSON.parse(row.attributes)).toEqual(r.attributes);
    expect(JSON.parse(row.links!)).toEqual(r.links);
  });

  it('writes ids, times and attribute JSON straight into the columns, as the JSONL writer spells them', () => {
    const TID2 = 'a0000000000000000000000000000001';
    const s = (traceId: string, spanId: string, attributes: object[]) => ({
      traceId: hex(traceId), spanId: hex(spanId), parentSpanId: hex('00000000000000ff'), name: 'Phase: RUN',
      startTimeUnixNano: '18446744073709551615', endTimeUnixNano: '0', attributes,
    });
    const { rows, rejected } = spansToRows(decodeTraces(traces([
      s(TID, 'ffffffffffffffff', [kv('z', { stringValue: 'q"uote' }), kv('a', { intValue: 1 }), kv('m', { kvlistValue: { values: [kv('y', { boolValue: false }), kv('b', { doubleValue: 0.5 })] } }), kv('a', { intValue: 2 })]),
      s(TID2, '0000000000000001', [kv('__proto__', { stringValue: 'x' }), kv('10', { stringValue: 'ten' }), kv('9', { stringValue: 'nine' }), kv('dbt.event_type', { stringValue: 'v1.x.Y' })]),
      s(TID, '0100000000000000', []),
      s('00000000000000000000000000000000', '0100000000000000', []),
    ])));
    expect(rejected).toBe(1);
    expect([0, 1, 2].map((i) => rows.row(i).trace_id)).toEqual([TID, TID2, TID]);
    expect([0, 1, 2].map((i) => hexSpanId(rows.row(i).span_id))).toEqual(['ffffffffffffffff', '0000000000000001', '0100000000000000']);
    const r = rows.row(0);
    expect(r.parent_span_id).toBe(255n);
    // a zero end time means "not set": the span ends when it starts
    expect([r.start_ns, r.end_ns]).toEqual([2n ** 64n - 1n, 2n ** 64n - 1n]);
    // the text itself, not only what it parses to: sorted keys, the last of a repeated key, nested keys sorted
    expect(r.attributes).toBe(sortedJson({ a: 2, m: { b: 0.5, y: false }, z: 'q"uote' }));
    expect(r.attributes).toBe('{"a":2,"m":{"b":0.5,"y":false},"z":"q\\"uote"}');
    expect(rows.row(1).attributes).toBe('{"10":"ten","9":"nine"}');
    expect(rows.row(1).event_type).toBe('v1.x.Y');
    expect(rows.row(2).attributes).toBe('{}');
  });

  it('logs: body, event_name, event_id attribute, span id; OTLP/JSON takes the same path (hex ids, numeric times)', () => {
    const json = {
      resourceLogs: [{ scopeLogs: [{ logRecords: [
        { timeUnixNano: 1772073189904419000, severityNumber: 'SEVERITY_NUMBER_ERROR', body: { stringValue: 'got 4 results' }, traceId: TID, spanId: 'eee19b7ec3c1b174',
          eventName: 'v1.public.events.fusion.log.LogMessage', attributes: [kv('event_id', { stringValue: 'e-1' }), kv('unique_id', { stringValue: 'test.p.t' })] },
        { observedTimeUnixNano: '1772073189904419001', body: { kvlistValue: { values: [kv('a', { intValue: 1 })] } }, traceId: TID },
        { timeUnixNano: '1', body: { stringValue: 'no trace' } },
      ] }] }],
    };
    const { records, rejected } = logsToRecords(json as unknown as OtlpLogsRequest, () => 'generated');
    expect(rejected).toBe(1);
    expect(records).toEqual([
      { record_type: 'LogRecord', trace_id: TID, span_id: 'eee19b7ec3c1b174', span_name: null, event_id: 'e-1', time_unix_nano: '1772073189904419000',
        severity_number: 17, severity_text: 'ERROR', body: 'got 4 results', event_type: 'v1.public.events.fusion.log.LogMessage', attributes: { unique_id: 'test.p.t' } },
      { record_type: 'LogRecord', trace_id: TID, span_id: null, span_name: null, event_id: 'generated', time_unix_nano: '1772073189904419001',
        severity_number: 0, severity_text: 'INFO', body: '{"a":1}', event_type: '', attributes: {} },
    ]);
  });

  it('truncated or garbled protobuf throws (the receiver answers 400)', () => {
    const good = traces([{ traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), name: 'Phase: RUN', startTimeUnixNano: '1' }]);
    expect(() => decodeTraces(good.subarray(0, good.length - 3))).toThrow();
    expect(() => decodeTraces(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]))).toThrow();
  });
});
