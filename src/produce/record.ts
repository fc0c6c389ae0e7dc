/**
 * The real engine's JSONL record (telemetry.md §2), as parsed objects, and its byte-exact serializer.
 * Key order is the engine's, not the object's: the serializer writes envelope keys in the engine's
 * order per record_type and attribute keys alphabetically at every depth (the engine converts
 * through a sorted JSON map).
 */

export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };
export type Attributes = { [k: string]: AttrValue };
/** Attributes to add: undefined values are absent. */
export type AttributesInput = { readonly [k: string]: AttrValue | undefined };

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

/**
 * A JSON string literal. Ids, times and most names need no escaping: checking that in a loop is
 * cheaper than calling JSON.stringify for each one, and they are most of a record.
 */
function str(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return q(s);
  }
  return '"' + s + '"';
}

function nullable(v: string | null | undefined): string {
  return v === null || v === undefined ? 'null' : str(v);
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

/** A copy with keys sorted at every depth. */
export function sortKeys<T>(v: T): T {
  return sortDeep(v) as T;
}

/** The engine's JSON text of an attributes object (keys sorted at every depth). */
export function attributesJson(a: Attributes): string {
  return sortedJson(a);
}

// Entries repeat a lot (keys, phases, outcomes, codes): remember the JSON of short ones.
interface KeyEntries {
  /** `"key":` */
  prefix: string;
  /** entry text by value, for short values (most repeat: phases, outcomes, codes, names) */
  values: Map<AttrValue, string>;
}
const entries = new Map<string, KeyEntries>();
function entry(k: string, v: AttrValue): string {
  let e = entries.get(k);
  if (e === undefined) {
    if (entries.size >= 512) return `${str(k)}:${typeof v === 'object' && v !== null ? sortedJson(v) : q(v)}`;
    entries.set(k, (e = { prefix: str(k) + ':', values: new Map() }));
  }
  if (typeof v === 'object' && v !== null) return e.prefix + sortedJson(v);
  if (typeof v === 'string' && v.length > 64) return e.prefix + str(v);
  let t = e.values.get(v);
  if (t === undefined) {
    t = e.prefix + (typeof v === 'string' ? str(v) : q(v));
    if (e.values.size < 256) e.values.set(v, t);
  }
  return t;
}

/**
 * Attributes in engine order (keys ascending) with each entry's JSON text ready. The writer keeps span
 * attributes this way: adding entries is a merge of two sorted lists, and a record's attribute JSON
 * is a concatenation of fragments computed once per span (no per-record sort, no re-escaping of SQL).
 * Values are stored deep-sorted, so the object form is in engine order at every depth too.
 */
export class SortedAttrs {
  private constructor(
    private readonly keys: readonly string[],
    private readonly vals: readonly AttrValue[],
    private readonly frags: readonly string[],
  ) {}

  static readonly EMPTY = new SortedAttrs([], [], []);

  /** From any attributes object (undefined values are absent). */
  static of(a: AttributesInput): SortedAttrs {
    const keys: string[] = [];
    for (const k in a) if (a[k] !== undefined) keys.push(k);
    if (keys.length === 0) return SortedAttrs.EMPTY;
    keys.sort();
    const vals = new Array<AttrValue>(keys.length);
    const frags = new Array<string>(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const v = a[keys[i]!]!;
      vals[i] = typeof v === 'object' && v !== null ? sortKeys(v) : v;
      frags[i] = entry(keys[i]!, v);
    }
    return new SortedAttrs(keys, vals, frags);
  }

  get(key: string): AttrValue | undefined {
    const i = this.keys.indexOf(key);
    return i < 0 ? undefined : this.vals[i];
  }

  /** These attributes with `extra`'s entries added or replacing (undefined values in `extra` are ignored). */
  with(extra: AttributesInput | SortedAttrs): SortedAttrs {
    const b = extra instanceof SortedAttrs ? extra : SortedAttrs.of(extra);
    if (b.keys.length === 0) return this;
    if (this.keys.length === 0) return b;
    const keys: string[] = [];
    const vals: AttrValue[] = [];
    const frags: string[] = [];
    const ak = this.keys;
    const bk = b.keys;
    let i = 0;
    let j = 0;
    while (i < ak.length || j < bk.length) {
      const x = ak[i];
      const y = bk[j];
      if (y === undefined || (x !== undefined && x < y)) {
        keys.push(x!);
        vals.push(this.vals[i]!);
        frags.push(this.frags[i++]!);
      } else {
        if (x === y) i++;
        keys.push(y);
        vals.push(b.vals[j]!);
        frags.push(b.frags[j++]!);
      }
    }
    return new SortedAttrs(keys, vals, frags);
  }

  /** A new attributes object (keys in engine order). */
  object(): Attributes {
    const o: Attributes = {};
    for (let i = 0; i < this.keys.length; i++) o[this.keys[i]!] = this.vals[i]!;
    return o;
  }

  /** The engine's JSON text of these attributes: a concatenation of the entries' ready fragments. */
  json(): string {
    let json = '{';
    for (let i = 0; i < this.frags.length; i++) json += (i ? ',' : '') + this.frags[i];
    return json + '}';
  }
}

function linksJson(links: Link[] | null | undefined): string {
  if (!links) return 'null';
  let s = '[';
  for (let i = 0; i < links.length; i++) {
    const l = links[i]!;
    s += `${i ? ',' : ''}{"trace_id":${str(l.trace_id)},"span_id":${str(l.span_id)},"attributes":${attributesJson(l.attributes ?? {})}}`;
  }
  return s + ']';
}

function statusJson(st: SpanStatus | null | undefined): string {
  if (!st) return 'null';
  return `{"message":${nullable(st.message)},"code":${st.code}}`;
}

// Few distinct event types and severities per file: quote each once.
const quoted = new Map<string, string>();
function qc(s: string): string {
  let v = quoted.get(s);
  if (v === undefined) {
    v = q(s);
    if (quoted.size < 1024) quoted.set(s, v);
  }
  return v;
}

// The trace id of the previous record: a file's records mostly share one.
let lastTrace = '';
let lastTraceJson = '""';
function traceJson(t: string): string {
  if (typeof t !== 'string') return q(t) ?? 'null'; // malformed input is written as it came
  if (t !== lastTrace) {
    lastTraceJson = str(t);
    lastTrace = t;
  }
  return lastTraceJson;
}

/**
 * One JSONL line (without the newline) exactly as the engine writes it. `attributesText` is the
 * attributes' engine JSON when the caller has it ready (the writer does), else it is computed.
 */
export function serializeRecord(r: JsonlRecord, attributesText?: string): string {
  const ids = `"trace_id":${traceJson(r.trace_id)},"span_id":${nullable(r.span_id)},"span_name":${nullable(r.span_name)}`;
  const tail = `"severity_number":${r.severity_number},"severity_text":${qc(r.severity_text)}`;
  const et = `"event_type":${qc(r.event_type)},"attributes":${attributesText ?? attributesJson(r.attributes ?? {})}}`;
  // Ids and times are nullable: a record read from a file may lack what the engine always writes
  // (a load reads it so), and a Parquet file holds it as null.
  switch (r.record_type) {
    case 'SpanStart':
      return `{"record_type":"SpanStart",${ids},"parent_span_id":${nullable(r.parent_span_id)},"links":${linksJson(r.links)},"start_time_unix_nano":${nullable(r.start_time_unix_nano)},${tail},${et}`;
    case 'SpanEnd':
      return `{"record_type":"SpanEnd",${ids},"parent_span_id":${nullable(r.parent_span_id)},"links":${linksJson(r.links)},"start_time_unix_nano":${nullable(r.start_time_unix_nano)},"end_time_unix_nano":${nullable(r.end_time_unix_nano)},${tail},"status":${statusJson(r.status)},${et}`;
    case 'LogRecord':
      return `{"record_type":"LogRecord",${ids},"event_id":${nullable(r.event_id)},"time_unix_nano":${nullable(r.time_unix_nano)},${tail},"body":${str(r.body ?? '')},${et}`;
    default: {
      const other: never = r;
      throw new Error(`record_type: must be SpanStart, SpanEnd or LogRecord (got ${JSON.stringify((other as { record_type: unknown }).record_type)})`);
    }
  }
}

/**
 * Where a record read from a file was (its line, or a Parquet file's row): set by the readers
 * convert uses, so that a record the Parquet writer cannot take is named by it.
 */
export const SOURCE_LINE = Symbol('source line');
export type Located = { [SOURCE_LINE]?: number };
