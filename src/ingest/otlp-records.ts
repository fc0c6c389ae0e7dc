/**
 * OTLP requests (decoded protobuf or OTLP/JSON) -> records in the engine's JSONL shape, so received
 * data goes through the same normalizer as files. What OTLP loses is recovered where it can be
 * (reference/telemetry.md section 4): event_type from span names (spans) or event_name (logs),
 * nested attributes from their JSON text, `code.file.path`/`code.line.number` back to file/line.
 * SpanStart is never sent over OTLP: each finished span becomes one SpanEnd. Requests are converted
 * straight into the live source's columns (DuckDB's appender): not as JSONL text to parse again, nor
 * through record objects (a BigInt per id and time, an attributes object serialized afterwards), which
 * cost more than the decode. Outputs (--jsonl, --parquet) get records rebuilt from the rows.
 */
import type { OtlpAnyValue, OtlpKeyValue, OtlpLogsRequest, OtlpTraceRequest } from '../otlp/decode.js';
import { sortedJson, type AttrValue, type Attributes, type LogRecordRecord, type SpanEndRecord } from '../produce/record.js';
import { hexSpanId, LiveRows } from '../store/live.js';
import { eventType } from '../telemetry/event-types.js';

/** Span name patterns the engine generates (telemetry.md 1.2), most specific first. */
const NAME_PATTERNS: [RegExp, string, number][] = [
  [/^Node evaluated \(|^Node\(/, 'node.NodeEvaluated', 5],
  [/^Node processed \(/, 'node.NodeProcessed', 9],
  [/^Phase: /, 'phase.PhaseExecuted', 9],
  [/^Query executed/, 'query.QueryExecuted', 5],
  [/^Hook processed \(/, 'hook.HookProcessed', 9],
  [/^Artifact: /, 'artifact.ArtifactWritten', 9],
  [/^Asset parsed \(/, 'asset.AssetParsed', 5],
  [/^GenericOpItem: /, 'generic.GenericOpItemProcessed', 9],
  [/^GenericOp: /, 'generic.GenericOpExecuted', 9],
  [/^Package ".*" added$/, 'deps.DepsAddPackage', 9],
  [/^Package ".*" installed$/, 'deps.DepsPackageInstalled', 9],
  [/^Installing \d+ package/, 'deps.DepsAllPackagesInstalled', 9],
  [/^Update: /, 'update.PackageUpdate', 9],
  [/^Connection limit wait/, 'query.ConnectionLimitWait', 1],
  [/^Onboarding screen shown/, 'onboarding.OnboardingScreenShown', 9],
  [/ invocation \(/, 'invocation.Invocation', 9],
  [/ process \(/, 'process.Process', 9],
];

/** Attribute values the engine keeps as strings even though they may look like JSON. */
const STRING_KEYS = new Set(['sql', 'vars', 'content', 'body', 'query_description', 'raw_command']);

const SEVERITY_TEXT: Record<number, string> = { 1: 'TRACE', 5: 'DEBUG', 9: 'INFO', 13: 'WARN', 17: 'ERROR' };

/** A span's event_type: an explicit `event_type`/`dbt.event_type` attribute, else from its name. */
function recoverEventType(name: string, explicit: AttrValue | undefined): { eventType: string | null; severity: number } {
  if (typeof explicit === 'string' && explicit.startsWith('v1.')) return { eventType: explicit, severity: 9 };
  for (const [re, et, sev] of NAME_PATTERNS) if (re.test(name)) return { eventType: eventType(et), severity: sev };
  return { eventType: null, severity: 9 };
}

/**
 * Both shapes are read without conversion passes: protobufjs messages straight from decode (ids as
 * bytes, 64-bit values as Long, the AnyValue oneof named by its virtual `value` property) and OTLP/JSON
 * objects (ids as hex, 64-bit values as strings or numbers). Converting messages with toObject first
 * cost three times the decode itself.
 */
function which(v: OtlpAnyValue): keyof OtlpAnyValue | undefined {
  const named = (v as { value?: unknown }).value;
  if (typeof named === 'string') return named as keyof OtlpAnyValue;
  for (const k of ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] as const) {
    // own properties only: a decoded message's defaults live on its prototype (an empty AnyValue is null, not "")
    if (Object.hasOwn(v, k) && (v as Record<string, unknown>)[k] !== undefined) return k;
  }
  return undefined;
}

function scalar(v: OtlpAnyValue | undefined, parseJsonText: boolean, key: string): AttrValue {
  if (!v) return null;
  const k = which(v);
  if (k === 'stringValue') {
    const s = String(v.stringValue ?? "");
    if (parseJsonText && !STRING_KEYS.has(key) && (s.startsWith('{') || s.startsWith('['))) {
      try {
        return JSON.parse(s) as AttrValue;
      } catch {
        return s;
      }
    }
    return s;
  }
  if (k === 'boolValue') return Boolean(v.boolValue);
  // int64 travels as a string in protobuf-decoded form and as string or number in OTLP/JSON;
  // the engine writes 64-bit values as strings, 32-bit ones as numbers: small values become numbers.
  if (k === 'intValue') {
    const str = String(v.intValue);
    const n = Number(str);
    return Number.isSafeInteger(n) && Math.abs(n) < 2 ** 31 ? n : str;
  }
  if (k === 'doubleValue') return Number(v.doubleValue);
  if (k === 'arrayValue') return (v.arrayValue?.values ?? []).map((x) => scalar(x, false, ''));
  if (k === 'kvlistValue') return attributes(v.kvlistValue?.values, false);
  if (k === 'bytesValue') return typeof v.bytesValue === 'string' ? v.bytesValue : Buffer.from(v.bytesValue as unknown as Uint8Array).toString('base64');
  return null;
}

function attributes(kvs: OtlpKeyValue[] | undefined, parseJsonText: boolean): Attributes {
  const o: Attributes = {};
  for (const kv of kvs ?? []) {
    if (kv.key === 'code.file.path') o['file'] = scalar(kv.value, false, kv.key);
    else if (kv.key === 'code.line.number') o['line'] = scalar(kv.value, false, kv.key);
    else o[kv.key] = scalar(kv.value, parseJsonText, kv.key);
  }
  return o;
}

const HEX16 = /^[0-9a-f]{16}$/;
const HEX32 = /^[0-9a-f]{32}$/;

/** Ids: hex from OTLP/JSON or from the protobuf decoder; empty or all-zero ids mean "none". */
function id(v: string | Uint8Array | undefined): string | null {
  if (!v || v.length === 0) return null;
  const s = typeof v === 'string' ? v.toLowerCase() : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  return /^0+$/.test(s) ? null : s;
}

/** Long (protobufjs), number or decimal string -> decimal string; zero means unset. */
function nanos(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  const s = String(v);
  return /^\d+$/.test(s) && s !== '0' ? s : null;
}

function statusCode(code: string | number | undefined): number {
  if (code === undefined) return 0;
  if (typeof code === 'number') return code;
  if (/^\d+$/.test(code)) return Number(code);
  return code.endsWith('_OK') ? 1 : code.endsWith('_ERROR') ? 2 : 0;
}

function severityNumber(v: string | number | undefined): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (/^\d+$/.test(v)) return Number(v);
  const name = v.replace(/^SEVERITY_NUMBER_/, '').replace(/\d+$/, '');
  return { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 }[name] ?? 0;
}

export interface Converted<T> {
  records: T[];
  rejected: number;
  errors: string[];
}

export interface ConvertedRows {
  rows: LiveRows;
  rejected: number;
  errors: string[];
}

/** Values of the attributes a converter takes out of the attributes text (set by attributesText). */
const taken: { eventType: AttrValue | undefined; dbtEventType: AttrValue | undefined; eventId: AttrValue | undefined } = {
  eventType: undefined,
  dbtEventType: undefined,
  eventId: undefined,
};
const keysBuf: string[] = [];
const fragsBuf: string[] = [];

/** `"key":` of attribute keys seen (they repeat on every span); bounded, keys are the sender's choice. */
const keyPrefix = new Map<string, string>();

/** One entry's JSON text as the JSONL writer spells it (nested keys sorted). */
function entryText(key: string, v: AttrValue): string {
  let k = keyPrefix.get(key);
  if (k === undefined) {
    k = `${JSON.stringify(key)}:`;
    if (keyPrefix.size < 4096) keyPrefix.set(key, k);
  }
  // values are mostly distinct (names, ids, SQL): no cache, JSON.stringify of a string is cheap
  return k + (typeof v === 'object' && v !== null ? sortedJson(v) : JSON.stringify(v));
}

/**
 * Attributes as the engine's JSON text (keys ascending, a repeated key's last value wins), made of
 * one fragment per entry rather than an object serialized afterwards. `take`: the keys a span
 * (event_type, dbt.event_type) or a log record (event_id) carries apart, left in `taken`.
 */
function attributesText(kvs: OtlpKeyValue[] | undefined, parseJsonText: boolean, take: 'span' | 'log' | null): string {
  taken.eventType = taken.dbtEventType = taken.eventId = undefined;
  if (!kvs || kvs.length === 0) return '{}';
  const keys = keysBuf;
  const frags = fragsBuf;
  keys.length = 0;
  frags.length = 0;
  let sorted = true;
  for (let j = 0; j < kvs.length; j++) {
    const kv = kvs[j]!;
    let key = kv.key ?? '';
    let parse = parseJsonText;
    if (key === 'code.file.path') (key = 'file'), (parse = false);
    else if (key === 'code.line.number') (key = 'line'), (parse = false);
    // an object's __proto__ is no attribute (assigning one was ignored when attributes were objects)
    else if (key === '__proto__') continue;
    const v = scalar(kv.value, parse, key);
    if (take === 'span' && (key === 'event_type' || key === 'dbt.event_type')) {
      if (key === 'event_type') taken.eventType = v;
      else taken.dbtEventType = v;
      continue;
    }
    if (take === 'log' && key === 'event_id') {
      taken.eventId = v;
      continue;
    }
    if (keys.length > 0 && !(keys[keys.length - 1]! < key)) sorted = false;
    keys.push(key);
    frags.push(entryText(key, v));
  }
  if (sorted) return `{${frags.join(',')}}`;
  // Out of order or repeated keys: a stable sort keeps repeats in arrival order, the last one wins.
  const order = keys.map((_, k) => k).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
  const out: string[] = [];
  for (let k = 0; k < order.length; k++) {
    if (k + 1 < order.length && keys[order[k + 1]!] === keys[order[k]!]) continue;
    out.push(frags[order[k]!]!);
  }
  return `{${out.join(',')}}`;
}

const ZEROS = /^0+$/;

/** The trace id of the previous span: a request's spans mostly share one, so its hex is made once. */
let lastTraceBytes: Uint8Array | null = null;
let lastTraceHex = '';

/** A trace id (16 bytes, or hex in OTLP/JSON) as lower-case hex; null when missing, malformed or all zero. */
function traceIdHex(v: string | Uint8Array | undefined): string | null {
  if (v instanceof Uint8Array) {
    if (v.length !== 16) return null;
    const last = lastTraceBytes;
    if (last !== null) {
      let same = true;
      for (let k = 0; k < 16; k++) if (v[k] !== last[k]) (same = false), (k = 16);
      if (same) return lastTraceHex;
    }
    const s = Buffer.from(v.buffer, v.byteOffset, 16).toString('hex');
    if (ZEROS.test(s)) return null;
    // a copy: the request's buffer is not ours to keep
    lastTraceBytes = Uint8Array.from(v);
    lastTraceHex = s;
    return s;
  }
  const s = id(v);
  return s && HEX32.test(s) ? s : null;
}

/** Is this a span id: 8 bytes (or 16 hex digits) not all zero? */
function isSpanId(v: string | Uint8Array | undefined): boolean {
  if (v instanceof Uint8Array) {
    if (v.length !== 8) return false;
    for (let k = 0; k < 8; k++) if (v[k] !== 0) return true;
    return false;
  }
  const s = id(v);
  return s !== null && HEX16.test(s);
}

function setSpanId(rows: LiveRows, c: 'span_id' | 'parent_span_id', i: number, v: string | Uint8Array | undefined): void {
  if (!isSpanId(v)) return;
  if (v instanceof Uint8Array) rows.setIdBytes(c, i, v);
  else rows.setBigValue(c, i, BigInt(`0x${v!}`));
}

interface LongLike {
  low: number;
  high: number;
  unsigned: boolean;
}

/** Is a time set: a protobufjs Long, or (OTLP/JSON) a number or decimal string, not zero? */
function hasNanos(v: unknown): boolean {
  if (v !== null && typeof v === 'object') {
    const l = v as LongLike;
    return (l.low | l.high) !== 0 && (l.unsigned || l.high >= 0);
  }
  return nanos(v) !== null;
}

function setNanos(rows: LiveRows, c: 'start_ns' | 'end_ns' | 'time_ns', i: number, v: unknown): void {
  if (v !== null && typeof v === 'object') {
    const l = v as LongLike;
    rows.setWords(c, i, l.low >>> 0, l.high >>> 0);
  } else rows.setBigValue(c, i, BigInt(nanos(v)!));
}

/** Link JSON as the JSONL writer spells it. */
function linksText(links: { traceId: string | Uint8Array; spanId: string | Uint8Array; attributes?: OtlpKeyValue[] }[]): string {
  return `[${links
    .map((l) => `{"trace_id":${JSON.stringify(id(l.traceId) ?? '')},"span_id":${JSON.stringify(id(l.spanId) ?? '')},"attributes":${attributesText(l.attributes, true, null)}}`)
    .join(',')}]`;
}

/** An ExportTraceServiceRequest (decoded or OTLP/JSON) as SpanEnd rows of the live source. */
export function spansToRows(req: OtlpTraceRequest): ConvertedRows {
  let n = 0;
  for (const rs of req.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) n += ss.spans?.length ?? 0;
  const rows = new LiveRows(Math.max(1, n));
  const out: ConvertedRows = { rows, rejected: 0, errors: [] };
  for (const rs of req.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const traceId = traceIdHex(s.traceId);
        if (!traceId || !isSpanId(s.spanId) || !hasNanos(s.startTimeUnixNano)) {
          out.rejected++;
          if (out.errors.length < 5) out.errors.push(`span "${s.name}": invalid trace_id, span_id or start time`);
          continue;
        }
        const i = rows.addRow();
        const name = s.name ?? '';
        rows.setStr('record_type', i, 'SpanEnd');
        rows.setStr('trace_id', i, traceId);
        setSpanId(rows, 'span_id', i, s.spanId);
        setSpanId(rows, 'parent_span_id', i, s.parentSpanId);
        rows.setStr('span_name', i, name);
        setNanos(rows, 'start_ns', i, s.startTimeUnixNano);
        setNanos(rows, 'end_ns', i, hasNanos(s.endTimeUnixNano) ? s.endTimeUnixNano : s.startTimeUnixNano);
        rows.setStr('attributes', i, attributesText(s.attributes, true, 'span'));
        const { eventType: et, severity } = recoverEventType(name, taken.eventType ?? taken.dbtEventType);
        rows.setStr('event_type', i, et ?? '');
        rows.setNum('severity_number', i, severity);
        rows.setStr('severity_text', i, SEVERITY_TEXT[severity] ?? 'INFO');
        const code = statusCode(s.status?.code as string | number | undefined);
        if (code !== 0 || s.status?.message) {
          rows.setNum('status_code', i, code);
          rows.setStr('status_message', i, s.status?.message || null);
        }
        if (s.links?.length) rows.setStr('links', i, linksText(s.links));
      }
    }
  }
  return out;
}

/** An ExportLogsServiceRequest (decoded or OTLP/JSON) as LogRecord rows of the live source. */
export function logsToRows(req: OtlpLogsRequest, newEventId: () => string): ConvertedRows {
  let n = 0;
  for (const rl of req.resourceLogs ?? []) for (const sl of rl.scopeLogs ?? []) n += sl.logRecords?.length ?? 0;
  const rows = new LiveRows(Math.max(1, n));
  const out: ConvertedRows = { rows, rejected: 0, errors: [] };
  for (const rl of req.resourceLogs ?? []) {
    for (const sl of rl.scopeLogs ?? []) {
      for (const l of sl.logRecords ?? []) {
        const traceId = traceIdHex(l.traceId);
        const time = hasNanos(l.timeUnixNano) ? l.timeUnixNano : hasNanos(l.observedTimeUnixNano) ? l.observedTimeUnixNano : undefined;
        if (!traceId || time === undefined) {
          // The engine's logs always carry a trace; a log without one cannot join a run.
          out.rejected++;
          if (out.errors.length < 5) out.errors.push('log record: missing trace_id or time');
          continue;
        }
        const i = rows.addRow();
        const sev = severityNumber(l.severityNumber as string | number | undefined);
        const body = scalar(l.body, false, 'body');
        rows.setStr('record_type', i, 'LogRecord');
        rows.setStr('trace_id', i, traceId);
        setSpanId(rows, 'span_id', i, l.spanId);
        setNanos(rows, 'time_ns', i, time);
        rows.setNum('severity_number', i, sev);
        rows.setStr('severity_text', i, l.severityText || SEVERITY_TEXT[sev] || 'INFO');
        rows.setStr('body', i, typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body));
        rows.setStr('event_type', i, l.eventName ?? '');
        rows.setStr('attributes', i, attributesText(l.attributes, false, 'log'));
        rows.setStr('event_id', i, typeof taken.eventId === 'string' ? taken.eventId : newEventId());
      }
    }
  }
  return out;
}

/** The rows as the engine's records again (for outputs, which write records). */
export function rowsToRecords(rows: LiveRows): (SpanEndRecord | LogRecordRecord)[] {
  const out: (SpanEndRecord | LogRecordRecord)[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows.row(i);
    const attributes = JSON.parse(r.attributes) as Attributes;
    if (r.record_type === 'SpanEnd') {
      out.push({
        record_type: 'SpanEnd',
        trace_id: r.trace_id,
        span_id: hexSpanId(r.span_id)!,
        span_name: r.span_name ?? '',
        parent_span_id: hexSpanId(r.parent_span_id),
        links: r.links === null ? null : (JSON.parse(r.links) as SpanEndRecord['links']),
        start_time_unix_nano: String(r.start_ns),
        end_time_unix_nano: String(r.end_ns),
        severity_number: r.severity_number,
        severity_text: r.severity_text,
        status: r.status_code === null ? null : { message: r.status_message, code: r.status_code },
        event_type: r.event_type,
        attributes,
      });
    } else {
      out.push({
        record_type: 'LogRecord',
        trace_id: r.trace_id,
        span_id: hexSpanId(r.span_id),
        span_name: null,
        event_id: r.event_id!,
        time_unix_nano: String(r.time_ns),
        severity_number: r.severity_number,
        severity_text: r.severity_text,
        body: r.body ?? '',
        event_type: r.event_type,
        attributes,
      });
    }
  }
  return out;
}

export function spansToRecords(req: OtlpTraceRequest): Converted<SpanEndRecord> {
  const { rows, rejected, errors } = spansToRows(req);
  return { records: rowsToRecords(rows) as SpanEndRecord[], rejected, errors };
}

export function logsToRecords(req: OtlpLogsRequest, newEventId: () => string): Converted<LogRecordRecord> {
  const { rows, rejected, errors } = logsToRows(req, newEventId);
  return { records: rowsToRecords(rows) as LogRecordRecord[], rejected, errors };
}
