/**
 * OTLP sink (`--export-to-otlp`): finished spans and log records go to the SDK's OTLP/HTTP protobuf
 * exporters (retries with backoff on 429/5xx, the OTEL_EXPORTER_OTLP_* variables) from bounded
 * queues exported in the background: the sink never makes a run wait. What the endpoint did not
 * get (dropped, failed, rejected through partialSuccess) is counted and said when it closes. Mapping per telemetry.md §4: SpanEnd only,
 * INTERNAL kind, parent as remote context, top-level attributes (nested values as JSON text on
 * spans, as maps on logs), file/line -> code.file.path/code.line.number, event_name on logs.
 */
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes as OtelAttributes, type HrTime, type SpanContext } from '@opentelemetry/api';
import type { AnyValue, LogAttributes, SeverityNumber } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { LogsExporterMetricsHelper, ProtobufLogsSerializer, ProtobufTraceSerializer, TraceExporterMetricsHelper, type ISerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord, SdkLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
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
  /** one export's timeout, retries included (default OTEL_EXPORTER_OTLP_TIMEOUT, else 10 s) */
  timeoutMillis?: number;
  /**
   * A live command is being recorded (record): the sink never makes it wait, drops and counts what
   * does not fit its queue, and gives up flushing after closeTimeoutMillis. Otherwise (a file
   * translated, a run generated) nothing waits on the producer but the export: drain() waits for the
   * queue to be sent and close() for every record, each export bounded by timeoutMillis.
   */
  live?: boolean;
  /** live: records of each signal waiting to be sent; more are dropped and counted (default 16384) */
  maxQueue?: number;
  /** live: how long close() waits for what is still queued (default 10 s) */
  closeTimeoutMillis?: number;
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

type Export<T> = (items: T[], done: (r: ExportResult) => void) => void;

interface Rejected {
  rejectedSpans?: number | string;
  rejectedLogRecords?: number | string;
  errorMessage?: string;
}

/**
 * The SDK's serializers, reading each answer's partialSuccess on the way: the SDK counts an answer
 * that rejects records as a success and only logs it through diag.
 */
function watchAnswers<Req, Res extends { partialSuccess?: Rejected }>(s: ISerializer<Req, Res>, onRejected: (p: Rejected) => void): ISerializer<Req, Res> {
  return {
    serializeRequest: (r) => s.serializeRequest(r),
    deserializeResponse: (data) => {
      const res = s.deserializeResponse(data);
      if (res?.partialSuccess) onRejected(res.partialSuccess);
      return res;
    },
  };
}

/**
 * One signal's bounded queue, exported in batches one at a time in the background. Records that do
 * not fit, or come after the endpoint failed, are counted, never waited for: a slow or dead endpoint
 * must not hold up the command being recorded nor the other sinks.
 */
class Channel<T> {
  private queue: T[] = [];
  private inFlight = 0;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  offered = 0;
  lost = 0;
  rejected = 0;

  constructor(
    private readonly send: Export<T>,
    private readonly o: { maxQueue: number; batch: number; delayMillis: number; stopped: () => boolean; onFail: (e: Error) => void },
  ) {}

  /** a record not even converted: the endpoint already failed */
  drop(): void {
    this.offered++;
    this.lost++;
  }

  push(x: T): void {
    this.offered++;
    if (this.o.stopped() || this.queue.length >= this.o.maxQueue) {
      this.lost++;
      return;
    }
    this.queue.push(x);
    if (this.queue.length >= this.o.batch) void this.pump();
    else if (!this.timer && !this.running) {
      this.timer = setTimeout(() => void this.pump(), this.o.delayMillis);
      this.timer.unref();
    }
  }

  /** Export what is queued; resolves when the queue is empty or the endpoint failed. */
  pump(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return (this.running ??= this.loop().finally(() => (this.running = null)));
  }

  private async loop(): Promise<void> {
    while (this.queue.length && !this.o.stopped()) {
      const items = this.queue.splice(0, this.o.batch);
      this.inFlight = items.length;
      const res = await new Promise<ExportResult>((r) => this.send(items, r));
      // (an export still running when the sink gave up was counted lost then)
      if (this.inFlight === 0) return;
      this.inFlight = 0;
      if (res.code !== ExportResultCode.SUCCESS) {
        this.lost += items.length;
        this.o.onFail(res.error ?? new Error('OTLP export failed'));
      }
    }
    this.abandon();
  }

  /** Count what is queued or being sent as lost (the endpoint failed, or the time to flush is over). */
  abandon(): void {
    if (!this.o.stopped()) return;
    this.lost += this.queue.length + this.inFlight;
    this.queue = [];
    this.inFlight = 0;
  }
}

export class OtlpSink implements TelemetrySink {
  readonly name: string;
  readonly minSeverity: number;
  /** set when the sink closes, if the endpoint did not get every record */
  error?: Error;
  private readonly spans: Channel<ReadableSpan>;
  private readonly logs: Channel<ReadableLogRecord>;
  private readonly exporters: { shutdown(): Promise<void> }[];
  private readonly serviceName: string;
  private readonly serviceVersion?: string;
  private readonly resources = new Map<string, { resource: Resource; scope: { name: string; version?: string } }>();
  /** engine version by trace, from each run's process span */
  private readonly versions = new Map<string, string>();
  private readonly closeTimeoutMillis: number;
  private readonly live: boolean;
  private failure?: Error;
  private gaveUp = false;
  private closed = false;
  private rejectMessage?: string;

  constructor(opts: OtlpSinkOptions = {}) {
    this.serviceName = opts.serviceName ?? 'dbt-fusion';
    this.serviceVersion = opts.serviceVersion;
    const base = opts.endpoint?.replace(/\/+$/, '');
    const tracesUrl = opts.tracesUrl ?? (base ? `${base}/v1/traces` : undefined);
    const logsUrl = opts.logsUrl ?? (base ? `${base}/v1/logs` : undefined);
    this.name = `OTLP export to ${tracesUrl ?? process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? tracesOf(process.env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? 'http://localhost:4318/v1/traces'}`;
    this.minSeverity = levelSeverity(opts.level, 'info');
    const onRejected = (p: Rejected) => {
      const spans = Number(p.rejectedSpans ?? 0);
      const logs = Number(p.rejectedLogRecords ?? 0);
      this.spans.rejected += spans;
      this.logs.rejected += logs;
      if ((spans || logs) && p.errorMessage) this.rejectMessage ??= p.errorMessage;
    };
    const common = { headers: opts.headers, timeoutMillis: opts.timeoutMillis };
    const traces = new OTLPExporterBase(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({ ...common, url: tracesUrl }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
        watchAnswers(ProtobufTraceSerializer, onRejected), 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined,
      ),
    );
    const logs = new OTLPExporterBase(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({ ...common, url: logsUrl }, 'LOGS', 'v1/logs', { 'Content-Type': 'application/x-protobuf' }),
        watchAnswers(ProtobufLogsSerializer, onRejected), 'otlp_http_log_exporter', LogsExporterMetricsHelper, undefined,
      ),
    );
    this.exporters = [traces, logs];
    this.live = opts.live ?? false;
    const channel = {
      maxQueue: this.live ? (opts.maxQueue ?? 16_384) : Infinity,
      batch: 512,
      delayMillis: 1000,
      stopped: () => this.failure !== undefined || this.gaveUp,
      onFail: (e: Error) => {
        this.failure ??= e;
      },
    };
    this.spans = new Channel<ReadableSpan>((items, done) => traces.export(items, done), channel);
    this.logs = new Channel<ReadableLogRecord>((items, done) => logs.export(items, done), channel);
    this.closeTimeoutMillis = this.live ? (opts.closeTimeoutMillis ?? 10_000) : Infinity;
  }

  private resourceOf(traceId: string): { resource: Resource; scope: { name: string; version?: string } } {
    const version = this.serviceVersion ?? this.versions.get(traceId) ?? '';
    let r = this.resources.get(version);
    if (!r) {
      const resource = defaultResource()
        .merge(detectResources({ detectors: [envDetector] }))
        .merge(resourceFromAttributes({ 'service.name': this.serviceName, ...(version ? { 'service.version': version } : {}) }));
      this.resources.set(version, (r = { resource, scope: { name: this.serviceName, version: version || undefined } }));
    }
    return r;
  }

  write(r: JsonlRecord): void {
    // Only finished spans are exported; SpanStart has no OTLP counterpart. A run's process span
    // starts first and carries the engine version: the resource's service.version.
    if (r.record_type === 'SpanStart') {
      const v = r.attributes?.version;
      if (r.parent_span_id === null && r.event_type.endsWith('.process.Process') && typeof v === 'string' && v !== 'unknown') this.versions.set(r.trace_id, v);
      return;
    }
    const channel = r.record_type === 'SpanEnd' ? this.spans : r.record_type === 'LogRecord' ? this.logs : null;
    if (channel && (this.failure || this.gaveUp)) return channel.drop();
    const { resource, scope } = this.resourceOf(r.trace_id);
    if (r.record_type === 'SpanEnd') this.spans.push(toReadableSpan(r, resource, scope));
    else if (r.record_type === 'LogRecord') this.logs.push(toLogRecord(r, resource, scope));
  }

  /** Live: never waits (the export runs in the background). Otherwise: until what is queued was sent. */
  async drain(): Promise<void> {
    if (!this.live) await Promise.all([this.spans.pump(), this.logs.pump()]);
  }

  /** Flush for at most closeTimeoutMillis, then say what the endpoint did not get. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const flushed = Promise.all([this.spans.pump(), this.logs.pump()]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => {
      if (Number.isFinite(this.closeTimeoutMillis)) timer = setTimeout(() => r(true), this.closeTimeoutMillis);
    });
    const timedOut = await Promise.race([flushed.then(() => false), late]);
    clearTimeout(timer);
    if (timedOut) {
      this.gaveUp = true;
      this.spans.abandon();
      this.logs.abandon();
    } else await Promise.all(this.exporters.map((e) => e.shutdown().catch(() => undefined)));
    const problems: string[] = [];
    const lost = this.spans.lost + this.logs.lost;
    if (lost) {
      const why = this.failure?.message ?? (timedOut ? `still sending ${this.closeTimeoutMillis / 1000} s after the run ended` : 'it fell behind the run, whose records were not held back for it');
      problems.push(`${why}; the endpoint did not get ${lost} of ${this.spans.offered + this.logs.offered} records`);
    }
    const rejected = this.spans.rejected + this.logs.rejected;
    if (rejected) problems.push(`OTLP endpoint rejected ${this.spans.rejected} spans, ${this.logs.rejected} log records${this.rejectMessage ? `: ${this.rejectMessage}` : ''}`);
    if (problems.length) this.error = new Error(problems.join('; '));
    else if (this.failure) this.error = this.failure;
    if (this.error) throw this.error;
  }
}

function tracesOf(endpoint: string | undefined): string | undefined {
  return endpoint ? `${endpoint.replace(/\/+$/, '')}/v1/traces` : undefined;
}

export function otlpSink(opts: OtlpSinkOptions = {}): OtlpSink {
  return new OtlpSink(opts);
}
