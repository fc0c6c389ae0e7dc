/**
 * The real engine's JSONL record (telemetry.md §2), as parsed objects, and its byte-exact serializer.
 * Key order is the engine's, not the object's: the serializer writes envelope keys in the engine's
 * order per record_type and attribute keys alphabetically at every depth (the engine converts
 * through a sorted JSON map).
 */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };
export type Attributes = { [k: string]: AttrValue };

export interface Link {
  trace_id: string;
  span_id: string;
  attributes: Attributes;
}

export interface SpanStatus {
  message: string | null;
  /** 0 unset, 1 ok, 2 error */
  code: number;
}

interface Envelope {
  trace_id: string;
  severity_number: number;
  severity_text: string;
  event_type: string;
  attributes: Attributes;
}

export interface SpanStartRecord extends Envelope {
  record_type: 'SpanStart';
  span_id: string;
  span_name: string;
  parent_span_id: string | null;
  links: Link[] | null;
  /** decimal nanoseconds since the epoch, as a string (19 digits exceed 2^53) */
  start_time_unix_nano: string;
}

export interface SpanEndRecord extends Envelope {
  record_type: 'SpanEnd';
  span_id: string;
  span_name: string;
  parent_span_id: string | null;
  links: Link[] | null;
  start_time_unix_nano: string;
  end_time_unix_nano: string;
  status: SpanStatus | null;
}

export interface LogRecordRecord extends Envelope {
  record_type: 'LogRecord';
  /** null when logged outside any span */
  span_id: string | null;
  span_name: string | null;
  event_id: string;
  time_unix_nano: string;
  body: string;
}

export type JsonlRecord = SpanStartRecord | SpanEndRecord | LogRecordRecord;
export type RecordType = JsonlRecord['record_type'];

const q = JSON.stringify;

function nullable(v: string | null | undefined): string {
  return v === null || v === undefined ? 'null' : q(v);
}

/** Are object keys in ascending order at every depth (so native JSON.stringify already writes engine order)? */
function sortedDeep(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!sortedDeep(x)) return false;
    return true;
  }
  let prev: string | null = null;
  for (const k in v as Record<string, unknown>) {
    if (prev === null) {
      // JS enumerates integer-like keys first whatever the insertion order: let the slow path order them.
      const c = k.charCodeAt(0);
      if (c >= 48 && c <= 57) return false;
    } else if (k < prev) return false;
    prev = k;
    if (!sortedDeep((v as Record<string, unknown>)[k])) return false;
  }
  return true;
}

function sortDeep(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(sortDeep);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  keys.sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const x = o[k];
    out[k] = x !== null && typeof x === 'object' ? sortDeep(x) : x;
  }
  return out;
}

/** JSON text with object keys sorted at every depth, compact. */
export function sortedJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object' || sortedDeep(v)) return JSON.stringify(v);
  return manualSortedJson(v);
}

function manualSortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return v === undefined ? 'null' : q(v);
  if (Array.isArray(v)) return '[' + v.map(manualSortedJson).join(',') + ']';
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort()) if (o[k] !== undefined) parts.push(q(k) + ':' + manualSortedJson(o[k]));
  return '{' + parts.join(',') + '}';
}

/** A copy with keys sorted at every depth (the writer stores attributes this way so serializing is native). */
export function sortKeys<T>(v: T): T {
  return sortDeep(v) as T;
}

function linksJson(links: Link[] | null | undefined): string {
  if (!links) return 'null';
  let s = '[';
  for (let i = 0; i < links.length; i++) {
    const l = links[i]!;
    s += `${i ? ',' : ''}{"trace_id":${q(l.trace_id)},"span_id":${q(l.span_id)},"attributes":${sortedJson(l.attributes ?? {})}}`;
  }
  return s + ']';
}

function statusJson(st: SpanStatus | null | undefined): string {
  if (!st) return 'null';
  return `{"message":${nullable(st.message)},"code":${st.code}}`;
}

/** One JSONL line (without the newline) exactly as the engine writes it. */
export function serializeRecord(r: JsonlRecord): string {
  const head = `{"record_type":${q(r.record_type)},"trace_id":${q(r.trace_id)},"span_id":${nullable(r.span_id)},"span_name":${nullable(r.span_name)}`;
  const tail = `"severity_number":${r.severity_number},"severity_text":${q(r.severity_text)}`;
  const et = `"event_type":${q(r.event_type)},"attributes":${sortedJson(r.attributes ?? {})}}`;
  switch (r.record_type) {
    case 'SpanStart':
      return `${head},"parent_span_id":${nullable(r.parent_span_id)},"links":${linksJson(r.links)},"start_time_unix_nano":${q(r.start_time_unix_nano)},${tail},${et}`;
    case 'SpanEnd':
      return `${head},"parent_span_id":${nullable(r.parent_span_id)},"links":${linksJson(r.links)},"start_time_unix_nano":${q(r.start_time_unix_nano)},"end_time_unix_nano":${q(r.end_time_unix_nano)},${tail},"status":${statusJson(r.status)},${et}`;
    case 'LogRecord':
      return `${head},"event_id":${q(r.event_id)},"time_unix_nano":${q(r.time_unix_nano)},${tail},"body":${q(r.body ?? '')},${et}`;
  }
}
