/**
 * OTLP requests -> records in the engine's JSONL shape (as columns, LiveRows), so received data goes
 * through the same normalizer as files. What OTLP loses is recovered where it can be
 * (reference/telemetry.md section 4): event_type from span names (spans) or event_name (logs),
 * nested attributes from their JSON text, `code.file.path`/`code.line.number` back to file/line.
 * SpanStart is never sent over OTLP: each finished span becomes one SpanEnd.
 *
 * Protobuf is read straight from the wire (src/otlp/wire.ts) and attributes are written as JSON text
 * as they are read; OTLP/JSON requests are first re-encoded as protobuf, so both take one path.
 */
import type { Type } from 'protobufjs';
import { otlpRoot } from '../otlp/decode.js';
import { Wire } from '../otlp/wire.js';
import type { JsonlRecord, LogRecordRecord, SpanEndRecord } from '../produce/record.js';
import { hexSpanId, LiveRows, type LiveRow } from '../store/live.js';
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

/** event_type from an explicit `event_type`/`dbt.event_type` attribute, else from the span name. */
export function recoverSpanEventType(name: string, explicit: string | undefined): { eventType: string | null; severity: number } {
  if (explicit?.startsWith('v1.')) return { eventType: explicit, severity: 9 };
  for (const [re, et, sev] of NAME_PATTERNS) if (re.test(name)) return { eventType: eventType(et), severity: sev };
  return { eventType: null, severity: 9 };
}

// ---- attributes as JSON text -------------------------------------------------------------------

const quoted = new Map<string, string>();
/** `"key":` for a JSON object; keys repeat on every span, so they are quoted once */
function keyPrefix(k: string): string {
  let q = quoted.get(k);
  if (q === undefined) {
    if (quoted.size > 10_000) quoted.clear();
    q = JSON.stringify(k) + ':';
    quoted.set(k, q);
  }
  return q;
}

/** An object's members in arrival order; a repeated key keeps its place and takes the last value, as in JS. */
class Members {
  keys: string[] = [];
  vals: string[] = [];
  /** reused from span to span: fewer short-lived objects */
  reset(): this {
    this.keys.length = 0;
    this.vals.length = 0;
    return this;
  }
  set(k: string, v: string): void {
    const i = this.keys.indexOf(k);
    if (i >= 0) this.vals[i] = v;
    else {
      this.keys.push(k);
      this.vals.push(v);
    }
  }
  /**
   * One flat string: built with += it was a tree of small string objects per span, retained until
   * DuckDB took the batch and copied by every young-generation GC meanwhile.
   */
  json(): string {
    const parts = ['{'];
    for (let i = 0; i < this.keys.length; i++) parts.push(i ? ',' : '', keyPrefix(this.keys[i]!), this.vals[i]!);
    parts.push('}');
    return parts.join('');
  }
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * AnyValue (w.pos..end) as JSON text. Span attributes carry nested values as JSON text, which is
 * kept as JSON when it parses (`parseJsonText`). int64: the engine writes 64-bit values as strings,
 * 32-bit ones as numbers, so small values become numbers.
 */
function anyValue(w: Wire, end: number, parseJsonText: boolean, key: string): string {
  let out = 'null';
  while (w.pos < end) {
    const tag = w.uint32();
    const wt = tag & 7;
    switch (tag >>> 3) {
      case 1:
        if (wt !== 2) break;
        {
          const s = w.string();
          out = parseJsonText && (s[0] === '{' || s[0] === '[') && !STRING_KEYS.has(key) && isJson(s) ? s : JSON.stringify(s);
        }
        continue;
      case 2:
        if (wt !== 0) break;
        out = w.uint32() ? 'true' : 'false';
        continue;
      case 3: {
        if (wt !== 0) break;
        const v = w.smallInt64();
        out = typeof v === 'number' || (v < 2n ** 31n && v > -(2n ** 31n)) ? String(v) : `"${v}"`;
        continue;
      }
      case 4:
        if (wt !== 1) break;
        out = JSON.stringify(w.double());
        continue;
      case 5: {
        if (wt !== 2) break;
        const e = w.sub();
        const items: string[] = [];
        while (w.pos < e) {
          const t = w.uint32();
          if (t === ((1 << 3) | 2)) {
            const ie = w.sub();
            items.push(anyValue(w, ie, false, ''));
            w.pos = ie;
          } else w.skip(t & 7);
        }
        out = '[' + items.join(',') + ']';
        continue;
      }
      case 6: {
        if (wt !== 2) break;
        const e = w.sub();
        const m = new Members();
        while (w.pos < e) {
          const t = w.uint32();
          if (t === ((1 << 3) | 2)) {
            const ke = w.sub();
            const v = keyValue(w, ke, false);
            m.set(kvKey, v);
            w.pos = ke;
          } else w.skip(t & 7);
        }
        out = m.json();
        continue;
      }
      case 7:
        if (wt !== 2) break;
        out = '"' + w.base64() + '"';
        continue;
    }
    w.skip(wt);
  }
  return out;
}

/**
 * Attribute keys, and the values of keys whose values repeat (materialization, node_type, phase,
 * schema ...), recognized by their bytes: decoding and quoting the same short strings on every span
 * was most of the decoding time. Values that do not repeat (names, checksums) stop being cached.
 */
interface KeyEntry {
  bytes: Buffer;
  key: string;
  values: { bytes: Buffer; json: string }[] | null;
  next: number;
  lookups: number;
  hits: number;
}

const MAX_VALUE_BYTES = 64;
const VALUES_PER_KEY = 16;

function sameBytes(a: Buffer, b: Buffer, s: number, e: number): boolean {
  if (a.length !== e - s) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[s + i]) return false;
  return true;
}

class KeyCache {
  private byHash = new Map<number, KeyEntry[]>();
  private size = 0;

  entry(buf: Buffer, s: number, e: number): KeyEntry {
    const n = e - s;
    const h = n === 0 ? 0 : n * 65_599 + buf[s]! * 257 + buf[e - 1]! * 31 + buf[s + (n >> 1)]!;
    let list = this.byHash.get(h);
    if (list) for (const k of list) if (sameBytes(k.bytes, buf, s, e)) return k;
    if (this.size > 4096) {
      this.byHash.clear();
      this.size = 0;
      list = undefined;
    }
    const raw = buf.toString('utf8', s, e);
    const key = raw === 'code.file.path' ? 'file' : raw === 'code.line.number' ? 'line' : raw;
    const k: KeyEntry = { bytes: Buffer.from(buf.subarray(s, e)), key, values: [], next: 0, lookups: 0, hits: 0 };
    if (list) list.push(k);
    else this.byHash.set(h, [k]);
    this.size++;
    return k;
  }
}

/** one cache per parseJsonText setting: the same bytes make different JSON with and without it */
const keyCaches = [new KeyCache(), new KeyCache()];

/** the key of the last keyValue() (a module variable, not a tuple per attribute) */
let kvKey = '';

/** KeyValue (w.pos..end) -> its value as JSON text; its key (code location keys back to file/line) in kvKey. */
function keyValue(w: Wire, end: number, parseJsonText: boolean): string {
  let ks = -1;
  let ke = -1;
  let vs = -1;
  let ve = -1;
  while (w.pos < end) {
    const tag = w.uint32();
    if (tag === ((1 << 3) | 2)) {
      ke = w.sub();
      ks = w.pos;
      w.pos = ke;
    } else if (tag === ((2 << 3) | 2)) {
      ve = w.sub();
      vs = w.pos;
      w.pos = ve;
    } else w.skip(tag & 7);
  }
  const buf = w.buf;
  const k = ks < 0 ? keyCaches[0]!.entry(buf, 0, 0) : keyCaches[parseJsonText ? 1 : 0]!.entry(buf, ks, ke);
  // set before each return: a nested kvlist value reads keys of its own
  kvKey = k.key;
  if (vs < 0) return 'null';
  const values = k.values;
  const cacheable = values !== null && ve - vs <= MAX_VALUE_BYTES;
  if (cacheable) {
    k.lookups++;
    for (const v of values) {
      if (sameBytes(v.bytes, buf, vs, ve)) {
        k.hits++;
        return v.json;
      }
    }
  }
  w.pos = vs;
  // code locations are never JSON text
  const json = anyValue(w, ve, parseJsonText && (k.key !== 'file' && k.key !== 'line'), k.key);
  kvKey = k.key;
  if (cacheable) {
    if (k.lookups >= 256 && k.hits < k.lookups / 2) k.values = null;
    else {
      values[k.next] = { bytes: Buffer.from(buf.subarray(vs, ve)), json };
      k.next = (k.next + 1) % VALUES_PER_KEY;
    }
  }
  return json;
}

/** A JSON string value's text, or undefined for other values. */
function jsonString(v: string | undefined): string | undefined {
  return v !== undefined && v.startsWith('"') ? (JSON.parse(v) as string) : undefined;
}

// ---- spans and logs ----------------------------------------------------------------------------

export interface Converted {
  rows: LiveRows;
  rejected: number;
  errors: string[];
}

/** Ids: empty or all-zero ids mean "none". */
function idOrNull(hex: string): string | null {
  return hex.length === 0 || /^0+$/.test(hex) ? null : hex;
}

/** Trace ids as hex; the spans of one request nearly always share one, so it is decoded once. */
class TraceIds {
  private last = Buffer.alloc(0);
  private lastHex: string | null = null;
  read(w: Wire): string | null {
    const end = w.sub();
    const start = w.pos;
    w.pos = end;
    if (!sameBytes(this.last, w.buf, start, end)) {
      this.last = Buffer.from(w.buf.subarray(start, end));
      const hex = idOrNull(w.buf.toString('hex', start, end));
      this.lastHex = hex?.length === 32 ? hex : null;
    }
    return this.lastHex;
  }
}

function reject(out: Converted, message: string): void {
  out.rejected++;
  if (out.errors.length < 5) out.errors.push(message);
}

/** Walk ResourceX (field 1 of the request) -> ScopeX (field 2) -> items (field 2), calling `item` for each. */
function eachItem(buf: Buffer, item: (w: Wire, end: number) => void): void {
  const w = new Wire(buf);
  const nested = (end: number, depth: number): void => {
    while (w.pos < end) {
      const tag = w.uint32();
      const want = depth === 0 ? (1 << 3) | 2 : (2 << 3) | 2;
      if (tag !== want) {
        w.skip(tag & 7);
        continue;
      }
      const e = w.sub();
      if (depth === 2) item(w, e);
      else nested(e, depth + 1);
      w.pos = e;
    }
  };
  nested(buf.length, 0);
}

/** ExportTraceServiceRequest (protobuf) -> one SpanEnd row per valid span. */
export function spansToRows(buf: Buffer): Converted {
  const out: Converted = { rows: new LiveRows(), rejected: 0, errors: [] };
  const traceIds = new TraceIds();
  const spanAttrs = new Members();
  const linkAttrs = new Members();
  eachItem(buf, (w, end) => {
    let traceId: string | null = null;
    let spanId: bigint | null = null;
    let parent: bigint | null = null;
    let name = '';
    let start = 0n;
    let stop = 0n;
    let code = 0;
    let message = '';
    let et: string | undefined;
    let dbtEt: string | undefined;
    const attrs = spanAttrs.reset();
    let links: string[] | null = null;
    while (w.pos < end) {
      const tag = w.uint32();
      switch (tag) {
        case (1 << 3) | 2:
          traceId = traceIds.read(w);
          break;
        case (2 << 3) | 2:
          spanId = w.id64();
          break;
        case (4 << 3) | 2:
          // a parent id of another length than 8 bytes (invalid OTLP) makes a root span
          parent = w.id64();
          break;
        case (5 << 3) | 2:
          name = w.string();
          break;
        case (7 << 3) | 1:
          start = w.fixed64();
          break;
        case (8 << 3) | 1:
          stop = w.fixed64();
          break;
        case (9 << 3) | 2: {
          const e = w.sub();
          const v = keyValue(w, e, true);
          w.pos = e;
          // event_type is not a span attribute in the engine's output: it only names the event
          if (kvKey === 'event_type') et = v;
          else if (kvKey === 'dbt.event_type') dbtEt = v;
          else attrs.set(kvKey, v);
          break;
        }
        case (13 << 3) | 2: {
          const e = w.sub();
          (links ??= []).push(link(w, e, linkAttrs.reset()));
          w.pos = e;
          break;
        }
        case (15 << 3) | 2: {
          const e = w.sub();
          while (w.pos < e) {
            const t = w.uint32();
            if (t === ((2 << 3) | 2)) message = w.string();
            else if (t === ((3 << 3) | 0)) code = w.uint32();
            else w.skip(t & 7);
          }
          break;
        }
        default:
          w.skip(tag & 7);
      }
    }
    if (!traceId || !spanId || start === 0n) {
      return reject(out, `span "${name}": invalid trace_id, span_id or start time`);
    }
    const explicit = jsonString(et !== undefined && et !== 'null' ? et : dbtEt);
    const { eventType: evt, severity } = recoverSpanEventType(name, explicit);
    const hasStatus = code !== 0 || message !== '';
    out.rows.push({
      record_type: 'SpanEnd', trace_id: traceId, span_id: spanId, parent_span_id: parent, span_name: name,
      event_type: evt ?? '', event_id: null, start_ns: start, end_ns: stop === 0n ? start : stop, time_ns: null,
      severity_number: severity, severity_text: SEVERITY_TEXT[severity] ?? 'INFO',
      status_code: hasStatus ? code : null, status_message: hasStatus && message ? message : null, body: null,
      links: links ? '[' + links.join(',') + ']' : null, attributes: attrs.json(),
    });
  });
  return out;
}

function link(w: Wire, end: number, attrs: Members): string {
  let traceId = '';
  let spanId = '';
  while (w.pos < end) {
    const tag = w.uint32();
    if (tag === ((1 << 3) | 2)) traceId = w.hex();
    else if (tag === ((2 << 3) | 2)) spanId = w.hex();
    else if (tag === ((4 << 3) | 2)) {
      const e = w.sub();
      const v = keyValue(w, e, true);
      attrs.set(kvKey, v);
      w.pos = e;
    } else w.skip(tag & 7);
  }
  return `{"trace_id":${JSON.stringify(idOrNull(traceId) ?? '')},"span_id":${JSON.stringify(idOrNull(spanId) ?? '')},"attributes":${attrs.json()}}`;
}

/** ExportLogsServiceRequest (protobuf) -> one LogRecord row per valid log record. */
export function logsToRows(buf: Buffer, newEventId: () => string): Converted {
  const out: Converted = { rows: new LiveRows(), rejected: 0, errors: [] };
  const traceIds = new TraceIds();
  eachItem(buf, (w, end) => {
    let time = 0n;
    let observed = 0n;
    let sev = 0;
    let sevText = '';
    let body = 'null';
    let traceId: string | null = null;
    let spanId: bigint | null = null;
    let eventName = '';
    let eventId: string | undefined;
    const attrs = new Members();
    while (w.pos < end) {
      const tag = w.uint32();
      switch (tag) {
        case (1 << 3) | 1:
          time = w.fixed64();
          break;
        case (11 << 3) | 1:
          observed = w.fixed64();
          break;
        case (2 << 3) | 0:
          sev = w.uint32();
          break;
        case (3 << 3) | 2:
          sevText = w.string();
          break;
        case (5 << 3) | 2: {
          const e = w.sub();
          body = anyValue(w, e, false, 'body');
          w.pos = e;
          break;
        }
        case (6 << 3) | 2: {
          const e = w.sub();
          const v = keyValue(w, e, false);
          w.pos = e;
          // the engine's event id travels as an attribute; it is the record's own field
          if (kvKey === 'event_id') eventId = jsonString(v);
          else attrs.set(kvKey, v);
          break;
        }
        case (9 << 3) | 2:
          traceId = traceIds.read(w);
          break;
        case (10 << 3) | 2:
          spanId = w.id64();
          break;
        case (12 << 3) | 2:
          eventName = w.string();
          break;
        default:
          w.skip(tag & 7);
      }
    }
    const t = time !== 0n ? time : observed;
    // The engine's logs always carry a trace; a log without one cannot join a run.
    if (!traceId || t === 0n) return reject(out, 'log record: missing trace_id or time');
    out.rows.push({
      record_type: 'LogRecord', trace_id: traceId, span_id: spanId, parent_span_id: null, span_name: null,
      event_type: eventName, event_id: eventId ?? newEventId(), start_ns: null, end_ns: null, time_ns: t,
      severity_number: sev, severity_text: sevText || SEVERITY_TEXT[sev] || 'INFO',
      status_code: null, status_message: null, body: body === 'null' ? '' : (jsonString(body) ?? body), links: null,
      attributes: attrs.json(),
    });
  });
  return out;
}

// ---- OTLP/JSON -----------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Obj[]) : []);

/** OTLP/JSON ids are hex (not protobuf JSON's base64); times may be numbers whose digits must survive. */
function fixJson(o: Obj, ids: string[], times: string[]): void {
  for (const k of ids) if (typeof o[k] === 'string') o[k] = Buffer.from(o[k] as string, 'hex');
  for (const k of times) if (typeof o[k] === 'number') o[k] = String(o[k]);
}

/**
 * An OTLP/JSON request as protobuf, for the one decoding path. Throws (TypeError, from protobufjs)
 * when it is not an OTLP request.
 */
export function jsonToProtobuf(signal: 'traces' | 'logs', req: Obj): Buffer {
  if (signal === 'traces') {
    for (const rs of list(req.resourceSpans)) {
      for (const ss of list(rs.scopeSpans)) {
        for (const s of list(ss.spans)) {
          fixJson(s, ['traceId', 'spanId', 'parentSpanId'], ['startTimeUnixNano', 'endTimeUnixNano']);
          for (const l of list(s.links)) fixJson(l, ['traceId', 'spanId'], []);
        }
      }
    }
  } else {
    for (const rl of list(req.resourceLogs)) {
      for (const sl of list(rl.scopeLogs)) for (const l of list(sl.logRecords)) fixJson(l, ['traceId', 'spanId'], ['timeUnixNano', 'observedTimeUnixNano']);
    }
  }
  const T: Type = otlpRoot().lookupType(
    signal === 'traces' ? 'opentelemetry.proto.trace.v1.ExportTraceServiceRequest' : 'opentelemetry.proto.logs.v1.ExportLogsServiceRequest',
  );
  return Buffer.from(T.encode(T.fromObject(req)).finish());
}

// ---- rows back to records (for the --jsonl and --parquet outputs) ---------------------------------

export function rowToRecord(r: LiveRow): JsonlRecord {
  const attributes = JSON.parse(r.attributes ?? '{}') as SpanEndRecord['attributes'];
  if (r.record_type === 'LogRecord') {
    const log: LogRecordRecord = {
      record_type: 'LogRecord', trace_id: r.trace_id, span_id: hexSpanId(r.span_id), span_name: null, event_id: r.event_id!,
      time_unix_nano: String(r.time_ns), severity_number: r.severity_number, severity_text: r.severity_text,
      body: r.body ?? '', event_type: r.event_type ?? '', attributes,
    };
    return log;
  }
  const span: SpanEndRecord = {
    record_type: 'SpanEnd', trace_id: r.trace_id, span_id: hexSpanId(r.span_id)!, span_name: r.span_name ?? '',
    parent_span_id: hexSpanId(r.parent_span_id), links: r.links ? (JSON.parse(r.links) as SpanEndRecord['links']) : null,
    start_time_unix_nano: String(r.start_ns), end_time_unix_nano: String(r.end_ns),
    severity_number: r.severity_number, severity_text: r.severity_text,
    status: r.status_code === null ? null : { message: r.status_message, code: r.status_code },
    event_type: r.event_type ?? '', attributes,
  };
  return span;
}
