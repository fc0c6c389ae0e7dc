/**
 * OTLP sink (`--export-to-otlp`): finished spans and log records go to the official OTLP/HTTP
 * protobuf exporters through the SDK's batch processors, which bring batching, retries with backoff
 * on 429/5xx and the OTEL_EXPORTER_OTLP_* variables. Mapping per telemetry.md §4: SpanEnd only,
 * INTERNAL kind, parent as remote context, top-level attributes (nested values as JSON text on
 * spans, as maps on logs), file/line -> code.file.path/code.line.number, event_name on logs.
 */
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes as OtelAttributes, type HrTime, type SpanContext } from '@opentelemetry/api';
import type { AnyValue, LogAttributes, SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { AttrValue, Attributes, JsonlRecord, LogRecordRecord, SpanEndRecord } from '../record.js';
import { levelSeverity, type Level, type TelemetrySink } from './types.js';

export interface OtlpSinkOptions {
  /** base URL; `/v1/traces` and `/v1/logs` are appended (default: OTEL_EXPORTER_OTLP_* variables) */
  endpoint?: string;
  tracesUrl?: string;
  logsUrl?: string;
  headers?: Record<string, string>;
  /** resource service.name (engine: "dbt-fusion") and service.version */
  serviceName?: string;
  serviceVersion?: string;
  level?: Level;
  timeoutMillis?: number;
  /** flush every this many records during a run (keeps the batch queues from dropping) */
  flushEvery?: number;
}

export function hrTime(ns: string | bigint): HrTime {
  const b = BigInt(ns);
  return [Number(b / 1_000_000_000n), Number(b % 1_000_000_000n)];
}

const INVALID_SPAN = '0000000000000000';

/** Span attributes: nested objects and arrays become JSON text; file/line become code location keys. */
export function spanAttributes(a: Attributes): OtelAttributes {
  const out: OtelAttributes = {};
  for (const [k, v] of Object.entries(a)) {
    if (k === 'file' || k === 'line' || v === null) continue;
    out[k] = typeof v === 'object' ? JSON.stringify(v) : v;
  }
  codeLocation(a, out);
  return out;
}

function toAny(v: AttrValue): AnyValue {
  if (v === null || typeof v !== 'object') return v as AnyValue;
  if (Array.isArray(v)) return v.map(toAny);
  const o: Record<string, AnyValue> = {};
  for (const [k, x] of Object.entries(v)) o[k] = toAny(x);
  return o;
}

/** Log attributes keep nested objects and arrays as OTLP maps and arrays. */
export function logAttributes(a: Attributes): LogAttributes {
  const out: LogAttributes = {};
  for (const [k, v] of Object.entries(a)) {
    if (k === 'file' || k === 'line' || v === null) continue;
    out[k] = toAny(v);
  }
  codeLocation(a, out as OtelAttributes);
  return out;
}

function codeLocation(a: Attributes, out: OtelAttributes): void {
  if (typeof a.file === 'string') {
    out['code.file.path'] = a.file;
    if (typeof a.line === 'number') out['code.line.number'] = a.line;
  }
}

function spanContext(traceId: string, spanId: string): SpanContext {
  return { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

export function toReadableSpan(r: SpanEndRecord, resource: Resource, scope: { name: string; version?: string }): ReadableSpan {
  const start = hrTime(r.start_time_unix_nano);
  const end = hrTime(r.end_time_unix_nano);
  const durNs = BigInt(r.end_time_unix_nano) - BigInt(r.start_time_unix_nano);
  const ctx = spanContext(r.trace_id, r.span_id);
  const st = r.status;
  return {
    name: r.span_name,
    kind: SpanKind.INTERNAL,
    spanContext: () => ({ ...ctx, isRemote: false }),
    parentSpanContext: r.parent_span_id ? spanContext(r.trace_id, r.parent_span_id) : undefined,
    startTime: start,
    endTime: end,
    status: !st || st.code === 0 ? { code: SpanStatusCode.UNSET } : st.code === 1 ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: st.message ?? undefined },
    attributes: spanAttributes(r.attributes ?? {}),
    links: (r.links ?? []).map((l) => ({ context: spanContext(l.trace_id, l.span_id), attributes: spanAttributes(l.attributes ?? {}) })),
    events: [],
    duration: hrTime(durNs < 0n ? 0n : durNs),
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

export function toLogRecord(r: LogRecordRecord, resource: Resource, scope: { name: string; version?: string }): SdkLogRecord {
  const t = hrTime(r.time_unix_nano);
  const rec: ReadableLogRecord = {
    hrTime: t,
    hrTimeObserved: t,
    spanContext: spanContext(r.trace_id, r.span_id ?? INVALID_SPAN),
    severityText: r.severity_text,
    severityNumber: r.severity_number as SeverityNumber,
    body: r.body,
    eventName: r.event_type,
    resource,
    instrumentationScope: scope,
    attributes: logAttributes(r.attributes ?? {}),
    droppedAttributesCount: 0,
  };
  // The processor only reads; the setters exist to satisfy the SDK's record type.
  return { ...rec, setAttribute: () => rec, setAttributes: () => rec, setBody: () => rec, setEventName: () => rec, setSeverityNumber: () => rec, setSeverityText: () => rec } as unknown as SdkLogRecord;
}

/** Wraps an exporter to remember the first failure (the processors only log them). */
function watch<T extends SpanExporter | LogRecordExporter>(inner: T, onFail: (e: Error) => void): T {
  const exp = inner.export.bind(inner) as (items: unknown[], cb: (r: ExportResult) => void) => void;
  return new Proxy(inner, {
    get(target, p, recv) {
      if (p === 'export')
        return (items: unknown[], cb: (r: ExportResult) => void) =>
          exp(items, (res) => {
            if (res.code !== ExportResultCode.SUCCESS) onFail(res.error ?? new Error('OTLP export failed'));
            cb(res);
          });
      return Reflect.get(target, p, recv);
    },
  });
}

export class OtlpSink implements TelemetrySink {
  readonly name: string;
  readonly minSeverity: number;
  error?: Error;
  private readonly spans: BatchSpanProcessor;
  private readonly logs: BatchLogRecordProcessor;
  private readonly resource: Resource;
  private readonly scope: { name: string; version?: string };
  private sinceFlush = 0;
  private readonly flushEvery: number;
  private flushing: Promise<void> | null = null;

  constructor(opts: OtlpSinkOptions = {}) {
    const serviceName = opts.serviceName ?? 'dbt-fusion';
    this.resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ 'service.name': serviceName, ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}) }));
    this.scope = { name: serviceName, version: opts.serviceVersion };
    const base = opts.endpoint?.replace(/\/+$/, '');
    const common = { headers: opts.headers, timeoutMillis: opts.timeoutMillis };
    const tracesUrl = opts.tracesUrl ?? (base ? `${base}/v1/traces` : undefined);
    const logsUrl = opts.logsUrl ?? (base ? `${base}/v1/logs` : undefined);
    this.name = `otlp ${tracesUrl ?? process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318'}`;
    this.minSeverity = levelSeverity(opts.level, 'info');
    this.flushEvery = opts.flushEvery ?? 8192;
    const onFail = (e: Error) => {
      this.error ??= e;
    };
    const queue = { maxQueueSize: this.flushEvery * 2, maxExportBatchSize: 512, scheduledDelayMillis: 1000 };
    this.spans = new BatchSpanProcessor(watch(new OTLPTraceExporter({ ...common, url: tracesUrl }), onFail), queue);
    this.logs = new BatchLogRecordProcessor({ exporter: watch(new OTLPLogExporter({ ...common, url: logsUrl }), onFail), ...queue });
  }

  write(r: JsonlRecord): void {
    if (this.error) throw this.error;
    // Only finished spans are exported; SpanStart has no OTLP counterpart.
    if (r.record_type === 'SpanEnd') this.spans.onEnd(toReadableSpan(r, this.resource, this.scope));
    else if (r.record_type === 'LogRecord') this.logs.onEmit(toLogRecord(r, this.resource, this.scope));
    else return;
    if (++this.sinceFlush >= this.flushEvery && !this.flushing) {
      this.sinceFlush = 0;
      this.flushing = Promise.all([this.spans.forceFlush(), this.logs.forceFlush()]).then(() => undefined).finally(() => (this.flushing = null));
    }
  }

  async drain(): Promise<void> {
    if (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    if (this.flushing) await this.flushing;
    await Promise.all([this.spans.forceFlush(), this.logs.forceFlush()]);
    await Promise.all([this.spans.shutdown(), this.logs.shutdown()]);
    if (this.error) throw this.error;
  }
}

export function otlpSink(opts: OtlpSinkOptions = {}): OtlpSink {
  return new OtlpSink(opts);
}
