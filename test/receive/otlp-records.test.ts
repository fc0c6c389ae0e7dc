/** OTLP requests (protobufjs-decoded or OTLP/JSON) -> the engine's JSONL record and attribute shapes. */
import { describe, expect, it } from 'vitest';
import { logsToRecords, logsToRows, spansToRecords, spansToRows } from '../../src/ingest/otlp-records.js';
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
  it('maps every AnyValue kind, nested JSON text, code locations and event_type', () => {
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
      file: 'models/a.sql', line: 12,
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
      startTimeUnixNano: '9223372036854775807', endTimeUnixNano: '0', attributes,
    });
    const { rows, rejected } = spansToRows(decodeTraces(traces([
      s(TID, 'ffffffffffffffff', [kv('z', { stringValue: 'q"uote' }), kv('a', { intValue: 1 }), kv('m', { kvlistValue: { values: [kv('y', { boolValue: false }), kv('b', { doubleValue: 0.5 })] } })]),
      s(TID2, '0000000000000001', [kv('__proto__', { stringValue: 'x' }), kv('10', { stringValue: 'ten' }), kv('9', { stringValue: 'nine' }), kv('dbt.event_type', { stringValue: 'v1.x.Y' })]),
      s(TID, '0100000000000000', []),
      s('00000000000000000000000000000000', '0100000000000000', []),
    ])));
    expect(rejected).toBe(1);
    expect([0, 1, 2].map((i) => rows.row(i).trace_id)).toEqual([TID, TID2, TID]);
    expect([0, 1, 2].map((i) => hexSpanId(rows.row(i).span_id))).toEqual(['ffffffffffffffff', '0000000000000001', '0100000000000000']);
    const r = rows.row(0);
    expect(r.parent_span_id).toBe(255n);
    // a zero end time means "not set": the span has not ended, a SpanStart
    expect([r.record_type, r.start_ns, r.end_ns]).toEqual(['SpanStart', 2n ** 63n - 1n, null]);
    // the text itself, not only what it parses to: sorted keys, nested keys sorted
    expect(r.attributes).toBe(sortedJson({ a: 1, m: { b: 0.5, y: false }, z: 'q"uote' }));
    expect(r.attributes).toBe('{"a":1,"m":{"b":0.5,"y":false},"z":"q\\"uote"}');
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

  it('an attribute key given twice rejects the span, at the top, in a kvlist or inside JSON text (a JSONL line writing a key twice is refused)', () => {
    const s = (attributes: object[]) => ({ traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), name: 'Phase: RUN', startTimeUnixNano: '1', endTimeUnixNano: '2', attributes });
    const { rejected, errors } = spansToRecords(decodeTraces(traces([
      s([kv('dup', { stringValue: 'first' }), kv('a', { intValue: 1 }), kv('dup', { stringValue: 'last' })]),
      s([kv('m', { kvlistValue: { values: [kv('k', { intValue: 1 }), kv('k', { intValue: 2 })] } })]),
      s([kv('node_test_detail', { stringValue: '{"test_outcome":"TEST_OUTCOME_FAILED","test_outcome":"TEST_OUTCOME_PASSED"}' })]),
      s([kv('event_type', { stringValue: 'v1.public.events.fusion.phase.PhaseExecuted' }), kv('event_type', { stringValue: 'v1.public.events.fusion.node.NodeEvaluated' })]),
    ])));
    expect(rejected).toBe(4);
    const twice = 'key written twice (a reader may take either value)';
    expect(errors).toEqual([
      `resourceSpans[0].scopeSpans[0].spans[0].attributes[2].key: ${twice}: dup`,
      `resourceSpans[0].scopeSpans[0].spans[1].attributes[0].value.kvlistValue.values[1].key: ${twice}: k`,
      `resourceSpans[0].scopeSpans[0].spans[2].attributes[0].value.stringValue: ${twice}: test_outcome`,
      `resourceSpans[0].scopeSpans[0].spans[3].attributes[1].key: ${twice}: event_type`,
    ]);
  });

  it('a structured attribute the model reads (node_test_detail) whose JSON text does not parse rejects the span, naming it', () => {
    const s = (value: object) => ({ traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), name: 'Node evaluated (test.p.t)', startTimeUnixNano: '1', endTimeUnixNano: '2',
      attributes: [kv('unique_id', { stringValue: 'test.p.t' }), kv('node_test_detail', value)] });
    const { rejected, errors } = spansToRecords(decodeTraces(traces([
      s({ stringValue: '\ufeff{"failing_rows":4,"test_outcome":"TEST_OUTCOME_FAILED"}' }),
      s({ intValue: 4 }),
      s({ kvlistValue: { values: [kv('test_outcome', { stringValue: 'TEST_OUTCOME_FAILED' })] } }),
    ])));
    expect(rejected).toBe(2);
    expect(errors[0]).toMatch(/^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.attributes\[1\]\.value: node_test_detail: an object expected \(or JSON text of one\), got "\ufeff\{/);
    expect(errors[1]).toBe('resourceSpans[0].scopeSpans[0].spans[1].attributes[1].value: node_test_detail: an object expected (or JSON text of one), got number');
  });

  it('truncated or garbled protobuf throws (the receiver answers 400)', () => {
    const good = traces([{ traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), name: 'Phase: RUN', startTimeUnixNano: '1' }]);
    expect(() => decodeTraces(good.subarray(0, good.length - 3))).toThrow();
    expect(() => decodeTraces(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]))).toThrow();
  });
});

/**
 * A span or log record that could not be stored (DuckDB's appender wants strings where strings go,
 * 64-bit times, valid JSON text in attributes) is rejected while converting, with the field and the
 * reason, before the receiver answers: what it acknowledges must insert.
 */
describe('OTLP: JSON text in a string attribute', () => {
  it('is kept as its text where parsing it would change it (numbers past a double, nesting past 64 levels)', () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const odd = '{"a": 1e999, "b": 12345678901234567890123}';
    const span = {
      traceId: hex(TID), spanId: hex('eee19b7ec3c1b174'), name: 'Node evaluated (test.p.t)', startTimeUnixNano: '1772073188904419000', endTimeUnixNano: '1772073189904419000',
      attributes: [kv('deep', { stringValue: deep }), kv('odd', { stringValue: odd }), kv('fine', { stringValue: '{"a": [1, 2.5, "x"]}' })],
    };
    const { records, rejected, errors } = spansToRecords(decodeTraces(traces([span])));
    expect(errors).toEqual([]);
    expect(rejected).toBe(0);
    expect(records[0]!.attributes).toEqual({ deep, odd, fine: { a: [1, 2.5, 'x'] } });
  });
});

describe('OTLP/JSON and protobuf: every field the model keeps is type-checked', () => {
  const SID = 'eee19b7ec3c1b174';
  const good = { traceId: TID, spanId: SID, name: 'Phase: RUN', startTimeUnixNano: '1772073188904419000', endTimeUnixNano: '1772073189904419000' };
  const attr = (value: unknown, key: unknown = 'k') => ({ ...good, attributes: [{ key, value }] });
  const spanCases: [string, object, RegExp][] = [
    ['numeric name', { ...good, name: 5 }, /spans\[0\]\.name: a string expected, got number/],
    ['object name', { ...good, name: { a: 1 } }, /spans\[0\]\.name: a string expected, got object/],
    ['numeric trace id', { ...good, traceId: 5 }, /spans\[0\]\.traceId: 32 hex digits expected/],
    ['short span id', { ...good, spanId: 'abc' }, /spans\[0\]\.spanId: 16 hex digits expected/],
    ['numeric parent', { ...good, parentSpanId: 12345 }, /spans\[0\]\.parentSpanId: 16 hex digits expected/],
    ['non-hex parent', { ...good, parentSpanId: 'zzzzzzzzzzzzzzzz' }, /spans\[0\]\.parentSpanId/],
    ['start as object', { ...good, startTimeUnixNano: { a: 1 } }, /spans\[0\]\.startTimeUnixNano: .*integer/],
    ['end as object', { ...good, endTimeUnixNano: { a: 1 } }, /spans\[0\]\.endTimeUnixNano: .*integer/],
    ['fractional start', { ...good, startTimeUnixNano: 1.5 }, /spans\[0\]\.startTimeUnixNano/],
    ['start beyond 64 bits', { ...good, startTimeUnixNano: '99999999999999999999' }, /spans\[0\]\.startTimeUnixNano: .*beyond/],
    ['start beyond int64', { ...good, startTimeUnixNano: '9223372036854775808' }, /spans\[0\]\.startTimeUnixNano: .*beyond/],
    ['status code as object', { ...good, status: { code: { x: 1 } } }, /spans\[0\]\.status\.code/],
    ['status code past 2', { ...good, status: { code: 5 } }, /spans\[0\]\.status\.code: a status code \(0, 1, 2/],
    ['status message as number', { ...good, status: { code: 2, message: 5 } }, /spans\[0\]\.status\.message: a string expected/],
    ['status as string', { ...good, status: 'ERROR' }, /spans\[0\]\.status: an object expected/],
    ['attributes as string', { ...good, attributes: 'x' }, /spans\[0\]\.attributes: an array expected/],
    ['numeric attribute key', attr({ stringValue: 'x' }, 7), /spans\[0\]\.attributes\[0\]\.key: a string expected, got number/],
    ['missing attribute key', { ...good, attributes: [{ value: { stringValue: 'x' } }] }, /spans\[0\]\.attributes\[0\]\.key: a string expected/],
    ['attribute not an object', { ...good, attributes: [5] }, /spans\[0\]\.attributes\[0\]: an object expected/],
    ['stringValue as number', attr({ stringValue: 5 }), /attributes\[0\]\.value\.stringValue: a string expected/],
    ['boolValue as string', attr({ boolValue: 'false' }), /attributes\[0\]\.value\.boolValue: a boolean expected/],
    ['intValue not a number', attr({ intValue: 'abc' }), /attributes\[0\]\.value\.intValue: .*integer/],
    ['intValue fractional', attr({ intValue: 1.5 }), /attributes\[0\]\.value\.intValue: .*integer/],
    ['intValue beyond int64', attr({ intValue: '9223372036854775808' }), /attributes\[0\]\.value\.intValue: .*beyond/],
    ['doubleValue not a number', attr({ doubleValue: 'abc' }), /attributes\[0\]\.value\.doubleValue: a number expected/],
    ['arrayValue values as string', attr({ arrayValue: { values: 'x' } }), /attributes\[0\]\.value\.arrayValue\.values: an array expected/],
    ['nested numeric key', attr({ kvlistValue: { values: [{ key: 3, value: {} }] } }), /attributes\[0\]\.value\.kvlistValue\.values\[0\]\.key: a string expected/],
    ['bytesValue as number', attr({ bytesValue: 5 }), /attributes\[0\]\.value\.bytesValue: .*base64/],
    ['value as number', attr(5), /attributes\[0\]\.value: an object expected/],
    ['link ids as numbers', { ...good, links: [{ traceId: 5, spanId: 6 }] }, /spans\[0\]\.links\[0\]\.traceId: 32 hex digits expected/],
    ['links as object', { ...good, links: { traceId: TID } }, /spans\[0\]\.links: an array expected/],
    ['lone surrogate in name', { ...good, name: 'a\ud800b' }, /spans\[0\]\.name: .*UTF-16/],
    ['lone surrogate in an attribute', attr({ stringValue: '\udc00' }), /spans\[0\]\.attributes: .*UTF-16/],
    ['span not an object', 5 as unknown as object, /spans\[0\]: an object expected/],
  ];
  it.each(spanCases)('rejects a span with %s, naming the field', (_what, span, reason) => {
    const req = { resourceSpans: [{ scopeSpans: [{ spans: [span, { ...good, spanId: 'eee19b7ec3c1b175' }] }] }] } as unknown as OtlpTraceRequest;
    const { rows, rejected, errors } = spansToRows(req);
    expect(rejected).toBe(1);
    expect(errors.join('; ')).toMatch(reason);
    expect(rows.length).toBe(1);
    expect(hexSpanId(rows.row(0).span_id)).toBe('eee19b7ec3c1b175');
  });

  it('accepts what OTLP/JSON allows: numeric times, upper-case hex ids, null for unset, empty parent, enum names, special doubles', () => {
    const req = { resourceSpans: [{ scopeSpans: [{ spans: [{
      traceId: TID.toUpperCase(), spanId: SID.toUpperCase(), parentSpanId: '', name: null, startTimeUnixNano: 1772073188904419000, endTimeUnixNano: 1772073189904419000,
      status: { code: 'STATUS_CODE_ERROR', message: null }, links: null,
      attributes: [kv('i', { intValue: '-9223372036854775808' }), kv('d', { doubleValue: 'NaN' }), kv('e', { doubleValue: '2.5' }), kv('n', null as unknown as object), kv('u', { unknownValue: 1 }), kv('b', { bytesValue: 'aGk=' })],
    }] }] }] } as unknown as OtlpTraceRequest;
    const { records, rejected, errors } = spansToRecords(req);
    expect(errors).toEqual([]);
    expect(rejected).toBe(0);
    expect(records[0]).toMatchObject({ trace_id: TID, span_id: SID, parent_span_id: null, span_name: '', status: { code: 2, message: null } });
    expect(records[0]!.attributes).toEqual({ i: '-9223372036854775808', d: 'NaN', e: 2.5, n: null, u: null, b: 'aGk=' });
  });

  it('an event_type or event_id attribute that is not the engine\'s stays an attribute, not dropped', () => {
    const spans = { resourceSpans: [{ scopeSpans: [{ spans: [
      { ...good, attributes: [kv('event_type', { stringValue: 'click' }), kv('dbt.event_type', { intValue: '3' })] },
      { ...good, spanId: 'eee19b7ec3c1b175', attributes: [kv('event_type', { stringValue: 'v1.public.events.fusion.phase.PhaseExecuted' })] },
    ] }] }] } as unknown as OtlpTraceRequest;
    const { records } = spansToRecords(spans);
    expect(records[0]!.attributes).toEqual({ event_type: 'click', 'dbt.event_type': 3 });
    expect(records[1]).toMatchObject({ event_type: 'v1.public.events.fusion.phase.PhaseExecuted', attributes: {} });
    const logs = { resourceLogs: [{ scopeLogs: [{ logRecords: [
      { ...goodLog, attributes: [kv('event_id', { intValue: '7' })] },
      { ...goodLog, attributes: [kv('event_id', { stringValue: 'e-1' })] },
    ] }] }] } as unknown as OtlpLogsRequest;
    const l = logsToRecords(logs, () => 'generated').records;
    expect(l.map((r) => [r.event_id, r.attributes])).toEqual([['generated', { event_id: 7 }], ['e-1', {}]]);
  });

  it('a protobuf time beyond int64 is rejected (DuckDB keeps nanoseconds in a signed 64-bit integer)', () => {
    const s = { traceId: hex(TID), spanId: hex(SID), name: 'Phase: RUN', startTimeUnixNano: '9223372036854775808' };
    const { rejected, errors } = spansToRows(decodeTraces(traces([s, { ...s, startTimeUnixNano: '9223372036854775807' }])));
    expect(rejected).toBe(1);
    expect(errors[0]).toMatch(/startTimeUnixNano: .*beyond/);
  });

  const goodLog = { timeUnixNano: '1772073189904419000', traceId: TID, spanId: SID, severityNumber: 9, body: { stringValue: 'x' } };
  const logCases: [string, object, RegExp][] = [
    ['numeric severityText', { ...goodLog, severityText: 5 }, /logRecords\[0\]\.severityText: a string expected/],
    ['severityNumber as object', { ...goodLog, severityNumber: { a: 1 } }, /logRecords\[0\]\.severityNumber/],
    ['unknown severity name', { ...goodLog, severityNumber: 'LOUD' }, /logRecords\[0\]\.severityNumber/],
    // outside OTLP's SeverityNumber (0-24): the outputs' level filter would drop what the model keeps
    ['negative severityNumber', { ...goodLog, severityNumber: -1 }, /logRecords\[0\]\.severityNumber: a severity number \(0-24/],
    ['severityNumber past 24', { ...goodLog, severityNumber: 25 }, /logRecords\[0\]\.severityNumber: a severity number \(0-24/],
    ['numeric eventName', { ...goodLog, eventName: 5 }, /logRecords\[0\]\.eventName: a string expected/],
    ['body stringValue as number', { ...goodLog, body: { stringValue: 5 } }, /logRecords\[0\]\.body\.stringValue: a string expected/],
    ['time as object', { ...goodLog, timeUnixNano: { a: 1 } }, /logRecords\[0\]\.timeUnixNano/],
    ['numeric span id', { ...goodLog, spanId: 5 }, /logRecords\[0\]\.spanId: 16 hex digits expected/],
    ['numeric attribute key', { ...goodLog, attributes: [{ key: 1, value: { stringValue: 'x' } }] }, /logRecords\[0\]\.attributes\[0\]\.key/],
    ['lone surrogate in the body', { ...goodLog, body: { stringValue: 'a\ud800' } }, /logRecords\[0\]\.body: .*UTF-16/],
    ['record not an object', null as unknown as object, /logRecords\[0\]: an object expected/],
  ];
  it.each(logCases)('rejects a log record with %s, naming the field', (_what, log, reason) => {
    const req = { resourceLogs: [{ scopeLogs: [{ logRecords: [log, { ...goodLog, body: { stringValue: 'kept' } }] }] }] } as unknown as OtlpLogsRequest;
    const { records, rejected, errors } = logsToRecords(req, () => 'generated');
    expect(rejected).toBe(1);
    expect(errors.join('; ')).toMatch(reason);
    expect(records.map((r) => r.body)).toEqual(['kept']);
  });

  it('a request whose structure is not OTLP (spans not an array, a scope not an object) throws: the receiver answers 400', () => {
    expect(() => spansToRows({ resourceSpans: [{ scopeSpans: [{ spans: 'x' }] }] } as unknown as OtlpTraceRequest)).toThrow(/resourceSpans\[0\]\.scopeSpans\[0\]\.spans: an array expected/);
    expect(() => spansToRows({ resourceSpans: [{ scopeSpans: [5] }] } as unknown as OtlpTraceRequest)).toThrow(/resourceSpans\[0\]\.scopeSpans\[0\]: an object expected/);
    expect(() => logsToRows({ resourceLogs: [{ scopeLogs: 'x' }] } as unknown as OtlpLogsRequest, () => 'x')).toThrow(/resourceLogs\[0\]\.scopeLogs: an array expected/);
  });
});
