/**
 * OTLP requests (decoded protobuf or OTLP/JSON) -> records in the engine's JSONL shape, so received
 * data goes through the same normalizer as files. What OTLP loses is recovered where it can be
 * (reference/telemetry.md section 4): event_type from span names (spans) or event_name (logs),
 * nested attributes from their JSON text, `code.file.path`/`code.line.number` back to file/line.
 * SpanStart is never sent over OTLP: each finished span becomes one SpanEnd. recordsToRows hands
 * them to the live source as columns (DuckDB's appender), not as JSONL text to parse again.
 */
import type { OtlpAnyValue, OtlpKeyValue, OtlpLogsRequest, OtlpTraceRequest } from '../otlp/decode.js';
import { attributesJson, type AttrValue, type Attributes, type LogRecordRecord, type SpanEndRecord } from '../produce/record.js';
import { LiveRows } from '../store/live.js';
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

export function recoverSpanEventType(name: string, attrs: Attributes): { eventType: string | null; severity: number } {
  const explicit = attrs['event_type'] ?? attrs['dbt.event_type'];
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

export function spansToRecords(req: OtlpTraceRequest): Converted<SpanEndRecord> {
  const out: Converted<SpanEndRecord> = { records: [], rejected: 0, errors: [] };
  for (const rs of req.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const traceId = id(s.traceId);
        const spanId = id(s.spanId);
        const start = nanos(s.startTimeUnixNano);
        if (!traceId || !HEX32.test(traceId) || !spanId || !HEX16.test(spanId) || !start) {
          out.rejected++;
          if (out.errors.length < 5) out.errors.push(`span "${s.name}": invalid trace_id, span_id or start time`);
          continue;
        }
        const attrs = attributes(s.attributes, true);
        const { eventType: et, severity } = recoverSpanEventType(s.name ?? '', attrs);
        delete attrs['event_type'];
        delete attrs['dbt.event_type'];
        const code = statusCode(s.status?.code as string | number | undefined);
        const parent = id(s.parentSpanId);
        out.records.push({
          record_type: 'SpanEnd',
          trace_id: traceId,
          span_id: spanId,
          span_name: s.name ?? '',
          parent_span_id: parent,
          links: s.links?.length
            ? s.links.map((l) => ({ trace_id: id(l.traceId) ?? '', span_id: id(l.spanId) ?? '', attributes: attributes(l.attributes, true) }))
            : null,
          start_time_unix_nano: start,
          end_time_unix_nano: nanos(s.endTimeUnixNano) ?? start,
          severity_number: severity,
          severity_text: SEVERITY_TEXT[severity] ?? 'INFO',
          status: code === 0 && !s.status?.message ? null : { message: s.status?.message || null, code },
          event_type: et ?? '',
          attributes: attrs,
        });
      }
    }
  }
  return out;
}

export function logsToRecords(req: OtlpLogsRequest, newEventId: () => string): Converted<LogRecordRecord> {
  const out: Converted<LogRecordRecord> = { records: [], rejected: 0, errors: [] };
  for (const rl of req.resourceLogs ?? []) {
    for (const sl of rl.scopeLogs ?? []) {
      for (const l of sl.logRecords ?? []) {
        const traceId = id(l.traceId);
        const time = nanos(l.timeUnixNano) ?? nanos(l.observedTimeUnixNano);
        if (!traceId || !HEX32.test(traceId) || !time) {
          // The engine's logs always carry a trace; a log without one cannot join a run.
          out.rejected++;
          if (out.errors.length < 5) out.errors.push('log record: missing trace_id or time');
          continue;
        }
        const sev = severityNumber(l.severityNumber as string | number | undefined);
        const body = scalar(l.body, false, 'body');
        const attrs = attributes(l.attributes, false);
        const eventId = typeof attrs['event_id'] === 'string' ? (attrs['event_id'] as string) : newEventId();
        delete attrs['event_id'];
        const spanId = id(l.spanId);
        out.records.push({
          record_type: 'LogRecord',
          trace_id: traceId,
          span_id: spanId && HEX16.test(spanId) ? spanId : null,
          span_name: null,
          event_id: eventId,
          time_unix_nano: time,
          severity_number: sev,
          severity_text: l.severityText || SEVERITY_TEXT[sev] || 'INFO',
          body: typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body),
          event_type: l.eventName ?? '',
          attributes: attrs,
        });
      }
    }
  }
  return out;
}

/** An id's 16 hex digits as the unsigned integer of its 8 bytes (how the live source stores ids). */
function id64(hex: string | null): bigint | null {
  return hex && HEX16.test(hex) ? BigInt(`0x${hex}`) : null;
}

const big = (ns: string | null | undefined) => (ns ? BigInt(ns) : null);

/** Converted records as the live source's columns; attribute and link JSON as the JSONL writer spells it. */
export function recordsToRows(records: (SpanEndRecord | LogRecordRecord)[]): LiveRows {
  const rows = new LiveRows(records.length);
  for (const r of records) {
    const span = r.record_type === 'SpanEnd';
    rows.push({
      record_type: r.record_type,
      trace_id: r.trace_id,
      span_id: id64(r.span_id),
      parent_span_id: span ? id64(r.parent_span_id) : null,
      span_name: r.span_name,
      event_type: r.event_type,
      event_id: span ? null : r.event_id,
      start_ns: span ? big(r.start_time_unix_nano) : null,
      end_ns: span ? big(r.end_time_unix_nano) : null,
      time_ns: span ? null : big(r.time_unix_nano),
      severity_number: r.severity_number,
      severity_text: r.severity_text,
      status_code: span && r.status ? r.status.code : null,
      status_message: span && r.status ? r.status.message : null,
      body: span ? null : r.body,
      links: span && r.links
        ? `[${r.links.map((l) => `{"trace_id":${JSON.stringify(l.trace_id)},"span_id":${JSON.stringify(l.span_id)},"attributes":${attributesJson(l.attributes ?? {})}}`).join(',')}]`
        : null,
      attributes: attributesJson(r.attributes ?? {}),
    });
  }
  return rows;
}
