/** Records as the OTLP/JSON requests an exporter sends (the official serializers), and a plain POST of one. */
import { JsonLogsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { LogRecordRecord, SpanEndRecord } from '../../src/produce/record.js';
import { toLogRecord, toReadableSpan } from '../../src/produce/sinks/otlp.js';

const resource = resourceFromAttributes({ 'service.name': 'dbt-fusion' });
const scope = { name: 'dbt-fusion' };

/** An OTLP/JSON request object: a test edits it (to damage a span, say) before it is sent. */
export type OtlpJson = { resourceSpans?: { scopeSpans: { spans: Record<string, unknown>[] }[] }[]; resourceLogs?: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] };

export function tracesJson(spans: SpanEndRecord[]): OtlpJson {
  return JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans.map((s) => toReadableSpan(s, resource, scope)))!).toString()) as OtlpJson;
}

export function logsJson(logs: LogRecordRecord[]): OtlpJson {
  return JSON.parse(Buffer.from(JsonLogsSerializer.serializeRequest(logs.map((l) => toLogRecord(l, resource, scope)))!).toString()) as OtlpJson;
}

export async function postOtlpJson(url: string, signal: 'traces' | 'logs', body: object): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}/v1/${signal}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
