/**
 * Decoding of OTLP/HTTP protobuf requests with protobufjs over the OTLP .proto schema in ./proto
 * (no npm package ships a request decoder). Shared by tests and the OTLP receiver.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** The .proto files live in src/otlp/proto; from dist/ they are found by walking back to src. */
function protoDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const c of [join(here, 'proto'), join(here, '../../../src/otlp/proto'), join(here, '../../src/otlp/proto')]) {
    if (existsSync(join(c, 'trace.proto'))) return c;
  }
  throw new Error('OTLP .proto files not found (expected src/otlp/proto)');
}

let root: protobuf.Root | null = null;

export function otlpRoot(): protobuf.Root {
  if (root) return root;
  const dir = protoDir();
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => join(dir, target.replace(/^.*[\\/]/, ''));
  r.loadSync(['common.proto', 'resource.proto', 'trace.proto', 'logs.proto'].map((f) => join(dir, f)));
  root = r;
  return r;
}

const CONVERT: protobuf.IConversionOptions = { longs: String, enums: String, bytes: String, defaults: false, oneofs: false };

/** Decoded ExportTraceServiceRequest as a plain object (ids base64 unless `hexIds`). */
export function decodeTraceRequest(body: Uint8Array, hexIds = true): OtlpTraceRequest {
  const T = otlpRoot().lookupType('opentelemetry.proto.trace.v1.ExportTraceServiceRequest');
  const obj = T.toObject(T.decode(body), CONVERT) as OtlpTraceRequest;
  if (hexIds) walkIds(obj);
  return obj;
}

export function decodeLogsRequest(body: Uint8Array, hexIds = true): OtlpLogsRequest {
  const T = otlpRoot().lookupType('opentelemetry.proto.logs.v1.ExportLogsServiceRequest');
  const obj = T.toObject(T.decode(body), CONVERT) as OtlpLogsRequest;
  if (hexIds) walkIds(obj);
  return obj;
}

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** base64 id fields -> lower-case hex, in place. */
function walkIds(o: unknown): void {
  if (Array.isArray(o)) for (const x of o) walkIds(x);
  else if (o && typeof o === 'object') {
    for (const [k, v] of Object.entries(o)) {
      if (ID_KEYS.has(k) && typeof v === 'string') (o as Record<string, unknown>)[k] = Buffer.from(v, 'base64').toString('hex');
      else walkIds(v);
    }
  }
}

/** OTLP AnyValue -> plain JS value. */
export function anyValue(v: OtlpAnyValue | undefined): unknown {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return v.intValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  if (v.kvlistValue) return attrsToObject(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return v.bytesValue;
  return null;
}

export function attrsToObject(kvs: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const kv of kvs ?? []) o[kv.key] = anyValue(kv.value);
  return o;
}

export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
  bytesValue?: string;
}
export interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  links?: { traceId: string; spanId: string; attributes?: OtlpKeyValue[] }[];
  status?: { message?: string; code?: string };
}
export interface OtlpTraceRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { scope?: { name?: string; version?: string }; spans?: OtlpSpan[] }[] }[];
}
export interface OtlpLogRecord {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: string;
  severityText?: string;
  body?: OtlpAnyValue;
  attributes?: OtlpKeyValue[];
  traceId?: string;
  spanId?: string;
  eventName?: string;
}
export interface OtlpLogsRequest {
  resourceLogs?: { resource?: { attributes?: OtlpKeyValue[] }; scopeLogs?: { scope?: { name?: string }; logRecords?: OtlpLogRecord[] }[] }[];
}
