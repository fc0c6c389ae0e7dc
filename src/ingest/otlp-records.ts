/**
 * OTLP requests (decoded protobuf or OTLP/JSON) -> records in the engine's JSONL shape, so received
 * data goes through the same normalizer as files. What OTLP loses is recovered where it can be
 * (reference/telemetry.md section 4): event_type from span names (spans) or event_name (logs),
 * nested attributes from their JSON text, `code.file.path`/`code.line.number` back to file/line.
 * SpanStart is never sent over OTLP: each finished span becomes one SpanEnd (a span sent without an end,
 * one that has not ended, a SpanStart). Requests are converted
 * straight into the live source's columns (DuckDB's appender): not as JSONL text to parse again, nor
 * through record objects (a BigInt per id and time, an attributes object serialized afterwards), which
 * would cost more than the decode. Outputs (--jsonl, --parquet) get records rebuilt from the rows.
 */
import type { OtlpLogsRequest, OtlpTraceRequest } from '../otlp/decode.js';
import { sortedJson, type AttrValue, type Attributes, type LogRecordRecord, type SpanEndRecord, type SpanStartRecord } from '../produce/record.js';
import { hexSpanId, LiveRows } from '../store/live.js';
import { eventType } from '../telemetry/event-types.js';
import { OBJECT_ATTRIBUTES } from '../telemetry/details.js';
import { LONE_SURROGATE, wellFormed } from './lone-surrogate.js';
import { KEY_TWICE, keysWrittenTwice } from '../produce/line-form.js';
import { cutText } from '../render/cut-text.js';

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

const isEngineEventType = (v: AttrValue): v is string => typeof v === 'string' && v.startsWith('v1.');

/** A span's event_type: an explicit `event_type`/`dbt.event_type` attribute, else from its name. */
function recoverEventType(name: string, explicit: AttrValue | undefined): { eventType: string | null; severity: number } {
  if (explicit !== undefined && isEngineEventType(explicit)) return { eventType: explicit, severity: 9 };
  for (const [re, et, sev] of NAME_PATTERNS) if (re.test(name)) return { eventType: eventType(et), severity: sev };
  return { eventType: null, severity: 9 };
}


/**
 * A field of one span or log record that the model cannot keep as it is: that record is rejected
 * with this reason (partialSuccess), the others of the request go on. `field` is the path below the
 * value being converted; callers prefix their own part as the error unwinds, so no path is built
 * while nothing is wrong.
 */
class BadField extends Error {
  constructor(
    public field: string,
    readonly why: string,
  ) {
    super(why);
  }

  get reason(): string {
    return this.field ? `${this.field}: ${this.why}` : this.why;
  }
}

function fail(field: string, why: string): never {
  throw new BadField(field, why);
}

/** The error again, its field now below `prefix` (any other error becomes a BadField of `prefix`). */
function within(prefix: string, e: unknown): never {
  if (!(e instanceof BadField)) throw new BadField(prefix, `cannot be converted: ${(e as Error).message}`);
  e.field = e.field === '' ? prefix : e.field.startsWith('[') ? prefix + e.field : `${prefix}.${e.field}`;
  throw e;
}

/** What a value is, for messages: a JSON type, or a short quote of a string. */
function got(v: unknown): string {
  if (typeof v === 'string') return `got ${JSON.stringify(v.length > 40 ? `${cutText(v, 40)}…` : v)}`;
  return `got ${v === null ? 'null' : Array.isArray(v) ? 'array' : v instanceof Uint8Array ? `${v.length} bytes` : typeof v}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field: absent or null is "", anything but a string is rejected. */
function str(v: unknown, field: string): string {
  if (typeof v === 'string') {
    // a lone surrogate (OTLP/JSON "\ud800") would reach DuckDB as U+FFFD, and the outputs as an escape it cannot read back
    if (!wellFormed(v)) fail(field, LONE_SURROGATE);
    return v;
  }
  if (v === undefined || v === null) return '';
  return fail(field, `a string expected, ${got(v)}`);
}

/** Text made by JSON.stringify holds a lone surrogate as an escape, which DuckDB's JSON rejects. */
const SURROGATE_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f]/;
function checkJsonText(text: string, field: string): string {
  if (text.includes('\\ud') && SURROGATE_ESCAPE.test(text)) fail(field, LONE_SURROGATE);
  return text;
}

const KINDS = ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] as const;

/**
 * Both shapes are read without conversion passes: protobufjs messages straight from decode (ids as
 * bytes, 64-bit values as Long) and OTLP/JSON objects (ids as hex, 64-bit values as strings or
 * numbers). Converting messages with toObject first cost three times the decode itself.
 * The AnyValue kind set is the own property among the kinds: a decoded message's defaults live on
 * its prototype (an empty AnyValue is null, not ""), and protobufjs' virtual oneof property lists
 * the message's keys on every read.
 */
function which(v: Record<string, unknown>): (typeof KINDS)[number] | undefined {
  for (let i = 0; i < KINDS.length; i++) {
    const k = KINDS[i]!;
    if (Object.hasOwn(v, k)) {
      const x = v[k];
      if (x !== undefined && x !== null) return k;
    }
  }
  return undefined;
}

interface LongLike {
  low: number;
  high: number;
  unsigned: boolean;
  toString(): string;
}
const isLong = (v: unknown): v is LongLike => typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && typeof (v as LongLike).high === 'number';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT_TEXT = /^-?\d+$/;

/** An int64 AnyValue; the engine writes 64-bit values as strings, 32-bit ones as numbers: small values become numbers. */
function int64(v: unknown): number | string {
  let big: bigint;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) fail('intValue', `an integer expected, ${got(v)}`);
    if (Math.abs(v) < 2 ** 31) return v;
    big = BigInt(String(v));
  } else if (typeof v === 'string' && INT_TEXT.test(v)) big = BigInt(v);
  else if (isLong(v)) big = BigInt(v.toString());
  else return fail('intValue', `an integer expected (a number or decimal string), ${got(v)}`);
  if (big < INT64_MIN || big > INT64_MAX) fail('intValue', 'beyond the 64-bit integer range');
  const n = Number(big);
  return Math.abs(n) < 2 ** 31 ? n : big.toString();
}

/** A double AnyValue; NaN and the infinities, which JSON numbers cannot hold, keep their OTLP/JSON names. */
function double(v: unknown): number | string {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (Number.isFinite(n)) return n;
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return v;
  if (typeof v === 'number') return String(v);
  return fail('doubleValue', `a number expected, ${got(v)}`);
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const MAX_DEPTH = 64;

/**
 * JSON text parsed from a string attribute says what its text says: no number past a double's
 * range or an integer past its exact ones (1e999 would be null, a 23-digit id rounded), nesting
 * within MAX_DEPTH. Otherwise the string is kept as it came.
 */
function keepsItsText(v: AttrValue): boolean {
  const stack: [AttrValue, number][] = [[v, 0]];
  while (stack.length) {
    const [x, depth] = stack.pop()!;
    if (typeof x === 'number' && (!Number.isFinite(x) || (Number.isInteger(x) && !Number.isSafeInteger(x)))) return false;
    if (x === null || typeof x !== 'object') continue;
    if (depth >= MAX_DEPTH) return false;
    for (const y of Object.values(x)) stack.push([y as AttrValue, depth + 1]);
  }
  return true;
}

function scalar(v: unknown, parseJsonText: boolean, key: string, depth = 0): AttrValue {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) return fail('', `an object expected, ${got(v)}`);
  if (depth > MAX_DEPTH) fail('', `nested deeper than ${MAX_DEPTH} levels`);
  switch (which(v)) {
    case 'stringValue': {
      const x = v.stringValue;
      if (typeof x !== 'string') return fail('stringValue', `a string expected, ${got(x)}`);
      if (parseJsonText && !STRING_KEYS.has(key) && (x.startsWith('{') || x.startsWith('['))) {
        let parsed: AttrValue;
        try {
          parsed = JSON.parse(x) as AttrValue;
        } catch {
          return x;
        }
        if (!keepsItsText(parsed)) return x;
        // JSON.parse keeps a repeated key's last value, a load of the JSONL its first
        const twice = keysWrittenTwice(x, parsed)[0];
        if (twice !== undefined) fail('stringValue', `${KEY_TWICE}: ${twice}`);
        return parsed;
      }
      return x;
    }
    case 'boolValue':
      return typeof v.boolValue === 'boolean' ? v.boolValue : fail('boolValue', `a boolean expected, ${got(v.boolValue)}`);
    case 'intValue':
      return int64(v.intValue);
    case 'doubleValue':
      return double(v.doubleValue);
    case 'arrayValue': {
      const values = list(v.arrayValue, 'arrayValue');
      const out: AttrValue[] = new Array<AttrValue>(values.length);
      for (let i = 0; i < values.length; i++) {
        try {
          out[i] = scalar(values[i], false, '', depth + 1);
        } catch (e) {
          within(`arrayValue.values[${i}]`, e);
        }
      }
      return out;
    }
    case 'kvlistValue':
      return attributes(list(v.kvlistValue, 'kvlistValue'), depth + 1);
    case 'bytesValue': {
      const x = v.bytesValue;
      if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('base64');
      return typeof x === 'string' && BASE64.test(x) ? x : fail('bytesValue', `a base64 string expected, ${got(x)}`);
    }
    default:
      return null;
  }
}

/** The `values` of an ArrayValue or KeyValueList: absent is empty, anything but an array is rejected. */
function list(holder: unknown, field: string): unknown[] {
  if (!isObject(holder)) return fail(field, `an object expected, ${got(holder)}`);
  const values = holder.values;
  if (values === undefined || values === null) return [];
  return Array.isArray(values) ? values : fail(`${field}.values`, `an array expected, ${got(values)}`);
}

/** A KeyValue's key; the entry itself must be an object. Errors name the entry as `[i]`. */
function keyOf(kv: unknown, i: number): string {
  if (!isObject(kv)) return fail(`[${i}]`, `an object expected, ${got(kv)}`);
  const key = kv.key;
  if (typeof key !== 'string') return fail(`[${i}].key`, `a string expected, ${got(key)}`);
  return key;
}

/** A nested KeyValueList as an object (its JSON text is sorted by sortedJson). */
function attributes(kvs: unknown[], depth: number): Attributes {
  const o: Attributes = {};
  for (let i = 0; i < kvs.length; i++) {
    let key: string;
    try {
      key = keyOf(kvs[i], i);
    } catch (e) {
      within('kvlistValue.values', e);
    }
    if (key === '__proto__') continue;
    const name = key === 'code.file.path' ? 'file' : key === 'code.line.number' ? 'line' : key;
    if (Object.hasOwn(o, name)) fail(`kvlistValue.values[${i}].key`, `${KEY_TWICE}: ${name}`);
    try {
      o[name] = scalar((kvs[i] as Record<string, unknown>).value, false, key, depth);
    } catch (e) {
      within(`kvlistValue.values[${i}].value`, e);
    }
  }
  return o;
}

const HEX16 = /^[0-9a-fA-F]{16}$/;
const HEX32 = /^[0-9a-fA-F]{32}$/;
const ZEROS = /^0+$/;

/** Is an id absent: undefined, null, "" or no bytes (an unset bytes field of a decoded message is an empty array)? */
const noId = (v: unknown): boolean => v === undefined || v === null || v === '' || ((v instanceof Uint8Array || Array.isArray(v)) && v.length === 0);

/** The trace id of the previous span: a request's spans mostly share one, so its hex is made once. */
let lastTraceBytes: Uint8Array | null = null;
let lastTraceHex = '';

/** A trace id (16 bytes, or 32 hex digits in OTLP/JSON) as lower-case hex; a missing, malformed or all-zero id is rejected. */
function traceIdHex(v: unknown, field: string): string {
  if (v instanceof Uint8Array) {
    if (v.length !== 16) fail(field, v.length === 0 ? 'missing' : `16 bytes expected, ${got(v)}`);
    const last = lastTraceBytes;
    if (last !== null) {
      let same = true;
      for (let k = 0; k < 16; k++) if (v[k] !== last[k]) (same = false), (k = 16);
      if (same) return lastTraceHex;
    }
    const s = Buffer.from(v.buffer, v.byteOffset, 16).toString('hex');
    if (ZEROS.test(s)) fail(field, 'all zeros (an invalid id)');
    // a copy: the request's buffer is not ours to keep
    lastTraceBytes = Uint8Array.from(v);
    lastTraceHex = s;
    return s;
  }
  if (noId(v)) fail(field, 'missing');
  if (typeof v !== 'string' || !HEX32.test(v)) fail(field, `32 hex digits expected, ${got(v)}`);
  if (ZEROS.test(v)) fail(field, 'all zeros (an invalid id)');
  return v.toLowerCase();
}

/** A span id (8 bytes, or 16 hex digits): checked; null when absent or all zeros and not `required`. */
function spanId(v: unknown, field: string, required: boolean): Uint8Array | string | null {
  if (v instanceof Uint8Array) {
    if (v.length === 8) {
      for (let k = 0; k < 8; k++) if (v[k] !== 0) return v;
      return required ? fail(field, 'all zeros (an invalid id)') : null;
    }
    if (v.length !== 0) fail(field, `8 bytes expected, ${got(v)}`);
  } else if (!noId(v)) {
    if (typeof v !== 'string' || !HEX16.test(v)) fail(field, `16 hex digits expected, ${got(v)}`);
    if (!ZEROS.test(v)) return v;
    return required ? fail(field, 'all zeros (an invalid id)') : null;
  }
  return required ? fail(field, 'missing') : null;
}

function setSpanId(rows: LiveRows, c: 'span_id' | 'parent_span_id', i: number, v: Uint8Array | string | null): void {
  if (v === null) return;
  if (v instanceof Uint8Array) rows.setIdBytes(c, i, v);
  else rows.setBigValue(c, i, BigInt(`0x${v}`));
}

/**
 * Is a time set (not absent, not zero)? A protobufjs Long, or in OTLP/JSON a decimal string or an
 * integer number; DuckDB keeps nanoseconds in a signed 64-bit integer, so larger times are rejected.
 */
function timeSet(v: unknown, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string') {
    if (!/^\d+$/.test(v)) fail(field, `an unsigned integer expected (a decimal string or number), ${got(v)}`);
    if (v.length >= 19 && BigInt(v) > INT64_MAX) fail(field, 'beyond the largest time the model keeps (2^63 - 1 ns)');
    return !ZEROS.test(v);
  }
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) fail(field, `an unsigned integer expected, ${got(v)}`);
    if (v >= 2 ** 63) fail(field, 'beyond the largest time the model keeps (2^63 - 1 ns)');
    return v !== 0;
  }
  if (isLong(v)) {
    // fixed64: the high word of a value of 2^63 or more reads negative
    if (v.high < 0) fail(field, 'beyond the largest time the model keeps (2^63 - 1 ns)');
    return (v.low | v.high) !== 0;
  }
  return fail(field, `an unsigned integer expected (a decimal string or number), ${got(v)}`);
}

/** A time that timeSet accepted. */
function setNanos(rows: LiveRows, c: 'start_ns' | 'end_ns' | 'time_ns', i: number, v: unknown): void {
  if (isLong(v)) rows.setWords(c, i, v.low >>> 0, v.high >>> 0);
  // a number's shortest decimal form, which is the JSON text it came from for any time up to 2^63
  else rows.setBigValue(c, i, BigInt(typeof v === 'number' ? String(v) : (v as string)));
}

/** An enum as its number: a number or decimal string in the int32 range, or a name `names` knows. */
/** An OTLP enum field as its number (0 when unset): a number from 0 to `max`, or one of its names. */
function enumNumber(v: unknown, field: string, names: (name: string) => number | undefined, expected: string, max: number): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'number' ? v : typeof v === 'string' && INT_TEXT.test(v) ? Number(v) : typeof v === 'string' ? names(v) : undefined;
  if (n === undefined || !Number.isInteger(n) || n < 0 || n > max) return fail(field, `${expected} expected, ${got(v)}`);
  return n;
}

const STATUS: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };
const SEVERITY: Record<string, number> = { TRACE: 1, DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17, FATAL: 21 };
const statusName = (s: string): number | undefined => STATUS[s];
function severityName(s: string): number | undefined {
  const m = /^(?:SEVERITY_NUMBER_)?(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([1-4]?)$/.exec(s);
  return m ? SEVERITY[m[1]!]! + (m[2] ? Number(m[2]) - 1 : 0) : s === 'SEVERITY_NUMBER_UNSPECIFIED' ? 0 : undefined;
}

export interface Converted<T> {
  records: T[];
  rejected: number;
  errors: string[];
}

export interface ConvertedRows {
  rows: LiveRows;
  rejected: number;
  /** the first few reasons, each naming the record and field */
  errors: string[];
}

/** How many reasons a response carries; the count says how many records were rejected in all. */
const MAX_ERRORS = 5;

function reject(out: ConvertedRows, where: string, e: unknown): void {
  out.rejected++;
  if (out.errors.length >= MAX_ERRORS) return;
  try {
    within(where, e);
  } catch (bad) {
    out.errors.push((bad as BadField).reason);
  }
}

/** Values of the attributes a converter takes out of the attributes text (set by attributesText). */
const taken: { eventType: AttrValue | undefined; dbtEventType: AttrValue | undefined; eventId: AttrValue | undefined } = {
  eventType: undefined,
  dbtEventType: undefined,
  eventId: undefined,
};
const keysBuf: string[] = [];
const fragsBuf: string[] = [];
/** the index in the request of each entry of keysBuf */
const entriesBuf: number[] = [];

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
 * Attributes as the engine's JSON text (keys ascending, a key given twice refused), made of
 * one fragment per entry rather than an object serialized afterwards. `take`: the keys a span
 * (event_type, dbt.event_type) or a log record (event_id) carries apart, left in `taken`.
 * A malformed entry throws a BadField naming it (`[i].key`, `[i].value.intValue`, ...).
 */
function attributesText(kvs: unknown, parseJsonText: boolean, take: 'span' | 'log' | null): string {
  taken.eventType = taken.dbtEventType = taken.eventId = undefined;
  if (kvs === undefined || kvs === null) return '{}';
  if (!Array.isArray(kvs)) return fail('', `an array expected, ${got(kvs)}`);
  if (kvs.length === 0) return '{}';
  const keys = keysBuf;
  const frags = fragsBuf;
  const entries = entriesBuf;
  keys.length = 0;
  frags.length = 0;
  entries.length = 0;
  let sorted = true;
  for (let j = 0; j < kvs.length; j++) {
    let key = keyOf(kvs[j], j);
    let parse = parseJsonText;
    if (key === 'code.file.path') (key = 'file'), (parse = false);
    else if (key === 'code.line.number') (key = 'line'), (parse = false);
    // an object's __proto__ is no attribute (a plain object would ignore assigning one)
    else if (key === '__proto__') continue;
    let v: AttrValue;
    try {
      v = scalar((kvs[j] as Record<string, unknown>).value, parse, key);
    } catch (e) {
      within(`[${j}].value`, e);
    }
    // a structured attribute the model reads, sent as JSON text that did not parse (or as another
    // type): the model would read it as none (a failed test lost), so the span is rejected
    if (take === 'span' && v !== null && (typeof v !== 'object' || Array.isArray(v)) && (OBJECT_ATTRIBUTES as readonly string[]).includes(key))
      fail(`[${j}].value`, `${key}: an object expected (or JSON text of one), ${got(v)}`);
    // only the engine's own: another producer's `event_type` ("click") is an attribute like any other
    if (take === 'span' && (key === 'event_type' || key === 'dbt.event_type') && isEngineEventType(v)) {
      if ((key === 'event_type' ? taken.eventType : taken.dbtEventType) !== undefined) fail(`[${j}].key`, `${KEY_TWICE}: ${key}`);
      if (key === 'event_type') taken.eventType = v;
      else taken.dbtEventType = v;
      continue;
    }
    if (take === 'log' && key === 'event_id' && typeof v === 'string') {
      if (taken.eventId !== undefined) fail(`[${j}].key`, `${KEY_TWICE}: ${key}`);
      taken.eventId = v;
      continue;
    }
    if (keys.length > 0 && !(keys[keys.length - 1]! < key)) sorted = false;
    keys.push(key);
    entries.push(j);
    frags.push(entryText(key, v));
  }
  if (sorted) return checkJsonText(`{${frags.join(',')}}`, '');
  // Out of order or repeated keys: a stable sort keeps repeats in arrival order. A key given twice is
  // refused (JSON.parse of a JSONL line would keep its last value, a load its first).
  const order = keys.map((_, k) => k).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
  const out: string[] = [];
  for (let k = 0; k < order.length; k++) {
    if (k + 1 < order.length && keys[order[k + 1]!] === keys[order[k]!]) fail(`[${entries[order[k + 1]!]}].key`, `${KEY_TWICE}: ${keys[order[k]!]}`);
    out.push(frags[order[k]!]!);
  }
  return checkJsonText(`{${out.join(',')}}`, '');
}

/** The attributes text of a span, log or link, its errors named below `field`. */
function attributesOf(kvs: unknown, parseJsonText: boolean, take: 'span' | 'log' | null, field: string): string {
  try {
    return attributesText(kvs, parseJsonText, take);
  } catch (e) {
    return within(field, e);
  }
}

/** Link JSON as the JSONL writer spells it. */
function linksText(links: unknown): string | null {
  if (links === undefined || links === null) return null;
  if (!Array.isArray(links)) return fail('links', `an array expected, ${got(links)}`);
  if (links.length === 0) return null;
  const parts: string[] = [];
  for (let i = 0; i < links.length; i++) {
    const l: unknown = links[i];
    if (!isObject(l)) fail(`links[${i}]`, `an object expected, ${got(l)}`);
    const traceId = traceIdHex(l.traceId, `links[${i}].traceId`);
    const sid = spanId(l.spanId, `links[${i}].spanId`, true)!;
    const hex = typeof sid === 'string' ? sid.toLowerCase() : Buffer.from(sid.buffer, sid.byteOffset, 8).toString('hex');
    parts.push(`{"trace_id":"${traceId}","span_id":"${hex}","attributes":${attributesOf(l.attributes, true, null, `links[${i}].attributes`)}}`);
  }
  return `[${parts.join(',')}]`;
}

/** The array under `key` of one level of a request; absent or null is empty. */
function level(holder: unknown, key: string, where: string): unknown[] {
  if (!isObject(holder)) throw new Error(`${where || 'the request'}: an object expected, ${got(holder)}`);
  const v = holder[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(`${where ? `${where}.` : ''}${key}: an array expected, ${got(v)}`);
  return v;
}

/**
 * The spans (or log records) of a request by scope, with the path that names them. A request whose
 * levels are not objects and arrays is no OTLP request: that throws (the receiver answers 400).
 */
function itemsOf(req: unknown, resources: string, scopes: string, items: string): { where: string; items: unknown[] }[] {
  const out: { where: string; items: unknown[] }[] = [];
  const rs = level(req, resources, '');
  for (let a = 0; a < rs.length; a++) {
    const ss = level(rs[a], scopes, `${resources}[${a}]`);
    for (let b = 0; b < ss.length; b++) {
      const where = `${resources}[${a}].${scopes}[${b}]`;
      out.push({ where: `${where}.${items}`, items: level(ss[b], items, where) });
    }
  }
  return out;
}

/**
 * One span into a new row, or a BadField naming what the model cannot keep. Every check comes before
 * the row is added, so a rejected span leaves nothing behind.
 */
function addSpan(rows: LiveRows, s: unknown): void {
  if (!isObject(s)) return fail('', `an object expected, ${got(s)}`);
  const traceId = traceIdHex(s.traceId, 'traceId');
  const sid = spanId(s.spanId, 'spanId', true);
  const parent = spanId(s.parentSpanId, 'parentSpanId', false);
  const name = str(s.name, 'name');
  if (!timeSet(s.startTimeUnixNano, 'startTimeUnixNano')) fail('startTimeUnixNano', 'missing');
  const ended = timeSet(s.endTimeUnixNano, 'endTimeUnixNano');
  const attributes = attributesOf(s.attributes, true, 'span', 'attributes');
  const explicitEventType = taken.eventType ?? taken.dbtEventType;
  let code = 0;
  let message = '';
  const status = s.status;
  if (status !== undefined && status !== null) {
    if (!isObject(status)) fail('status', `an object expected, ${got(status)}`);
    code = enumNumber(status.code, 'status.code', statusName, 'a status code (0, 1, 2 or STATUS_CODE_UNSET/OK/ERROR)', 2);
    message = str(status.message, 'status.message');
  }
  const links = linksText(s.links);

  const i = rows.addRow();
  // Without an end (absent or 0) the span has not ended: a SpanStart, as a file that holds only the
  // span's start, so the model sees a span (and a run) that never finished. A SpanStart has no status.
  rows.setStr('record_type', i, ended ? 'SpanEnd' : 'SpanStart');
  rows.setStr('trace_id', i, traceId);
  setSpanId(rows, 'span_id', i, sid);
  setSpanId(rows, 'parent_span_id', i, parent);
  rows.setStr('span_name', i, name);
  setNanos(rows, 'start_ns', i, s.startTimeUnixNano);
  if (ended) setNanos(rows, 'end_ns', i, s.endTimeUnixNano);
  rows.setStr('attributes', i, attributes);
  const { eventType: et, severity } = recoverEventType(name, explicitEventType);
  rows.setStr('event_type', i, et ?? '');
  rows.setNum('severity_number', i, severity);
  rows.setStr('severity_text', i, SEVERITY_TEXT[severity] ?? 'INFO');
  if (ended && (code !== 0 || message)) {
    rows.setNum('status_code', i, code);
    rows.setStr('status_message', i, message || null);
  }
  if (links !== null) rows.setStr('links', i, links);
}

/** The fields of a span, and of a log record, that are read. */
const SPAN_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId', 'name', 'startTimeUnixNano', 'endTimeUnixNano', 'attributes', 'status', 'links']);
const LOG_FIELDS = new Set(['traceId', 'spanId', 'timeUnixNano', 'observedTimeUnixNano', 'severityNumber', 'severityText', 'body', 'eventName', 'attributes']);

/**
 * The first key an OTLP/JSON request's text writes twice in a field read, by the span or log record
 * that holds it (`resourceSpans[0].scopeSpans[0].spans[3]` -> `status.code`). JSON.parse kept its
 * last value; a JSONL line writing it twice is refused or read as its first, so the record is
 * rejected. `text`: the request's text, `req` its JSON.parse. A level above the records written
 * twice (`spans`) throws: the request is no OTLP request to take.
 */
export function keysTwiceByRecord(text: string, req: unknown, resources: string, scopes: string, items: string): Map<string, string> {
  const out = new Map<string, string>();
  const paths = keysWrittenTwice(text, req);
  if (paths.length === 0) return out;
  const read = items === 'spans' ? SPAN_FIELDS : LOG_FIELDS;
  const item = new RegExp(`^(${resources}\\[\\d+\\]\\.${scopes}\\[\\d+\\]\\.${items}\\[\\d+\\])\\.(([^.[]+).*)$`);
  const levels = new RegExp(`^${resources}(\\[\\d+\\]\\.${scopes}(\\[\\d+\\]\\.${items})?)?$`);
  for (const p of paths) {
    const m = item.exec(p);
    if (m && read.has(m[3]!) && !out.has(m[1]!)) out.set(m[1]!, m[2]!);
    else if (!m && levels.test(p)) throw new Error(`${p}: ${KEY_TWICE}`);
  }
  return out;
}

/**
 * An ExportTraceServiceRequest (decoded or OTLP/JSON) as SpanEnd rows (SpanStart for a span without
 * an end) of the live source. `twice`: keysTwiceByRecord of an OTLP/JSON request.
 */
export function spansToRows(req: OtlpTraceRequest, twice?: Map<string, string>): ConvertedRows {
  const groups = itemsOf(req, 'resourceSpans', 'scopeSpans', 'spans');
  const rows = new LiveRows(Math.max(1, groups.reduce((n, g) => n + g.items.length, 0)));
  const out: ConvertedRows = { rows, rejected: 0, errors: [] };
  for (const { where, items } of groups) {
    for (let k = 0; k < items.length; k++) {
      try {
        const field = twice?.get(`${where}[${k}]`);
        if (field !== undefined) fail(field, KEY_TWICE);
        addSpan(rows, items[k]);
      } catch (e) {
        reject(out, `${where}[${k}]`, e);
      }
    }
  }
  return out;
}

/** One log record into a new row, or a BadField; every check comes before the row is added. */
function addLog(rows: LiveRows, l: unknown, newEventId: () => string): void {
  if (!isObject(l)) return fail('', `an object expected, ${got(l)}`);
  // The engine's logs always carry a trace; a log without one cannot join a run.
  const traceId = traceIdHex(l.traceId, 'traceId');
  const sid = spanId(l.spanId, 'spanId', false);
  const time = timeSet(l.timeUnixNano, 'timeUnixNano') ? l.timeUnixNano : timeSet(l.observedTimeUnixNano, 'observedTimeUnixNano') ? l.observedTimeUnixNano : undefined;
  if (time === undefined) fail('timeUnixNano', 'missing (and no observedTimeUnixNano)');
  const sev = enumNumber(l.severityNumber, 'severityNumber', severityName, 'a severity number (0-24 or SEVERITY_NUMBER_*)', 24);
  const severityText = str(l.severityText, 'severityText');
  let body: AttrValue;
  try {
    body = scalar(l.body, false, 'body');
  } catch (e) {
    within('body', e);
  }
  const bodyText = typeof body === 'string' ? str(body, 'body') : body === null ? '' : JSON.stringify(body);
  const eventName = str(l.eventName, 'eventName');
  const attributes = attributesOf(l.attributes, false, 'log', 'attributes');
  const sentEventId = typeof taken.eventId === 'string' ? str(taken.eventId, 'attributes.event_id') : null;

  const i = rows.addRow();
  rows.setStr('record_type', i, 'LogRecord');
  rows.setStr('trace_id', i, traceId);
  setSpanId(rows, 'span_id', i, sid);
  setNanos(rows, 'time_ns', i, time);
  rows.setNum('severity_number', i, sev);
  rows.setStr('severity_text', i, severityText || SEVERITY_TEXT[sev] || 'INFO');
  rows.setStr('body', i, bodyText);
  rows.setStr('event_type', i, eventName);
  rows.setStr('attributes', i, attributes);
  rows.setEventId(i, sentEventId ?? newEventId(), sentEventId !== null);
}

/** An ExportLogsServiceRequest (decoded or OTLP/JSON) as LogRecord rows of the live source (`twice`: as spansToRows'). */
export function logsToRows(req: OtlpLogsRequest, newEventId: () => string, twice?: Map<string, string>): ConvertedRows {
  const groups = itemsOf(req, 'resourceLogs', 'scopeLogs', 'logRecords');
  const rows = new LiveRows(Math.max(1, groups.reduce((n, g) => n + g.items.length, 0)));
  const out: ConvertedRows = { rows, rejected: 0, errors: [] };
  for (const { where, items } of groups) {
    for (let k = 0; k < items.length; k++) {
      try {
        const field = twice?.get(`${where}[${k}]`);
        if (field !== undefined) fail(field, KEY_TWICE);
        addLog(rows, items[k], newEventId);
      } catch (e) {
        reject(out, `${where}[${k}]`, e);
      }
    }
  }
  return out;
}

/** The rows as the engine's records again (for outputs, which write records). */
export function rowsToRecords(rows: LiveRows): (SpanStartRecord | SpanEndRecord | LogRecordRecord)[] {
  const out: (SpanStartRecord | SpanEndRecord | LogRecordRecord)[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows.row(i);
    const attributes = JSON.parse(r.attributes) as Attributes;
    if (r.record_type === 'SpanStart') {
      out.push({
        record_type: 'SpanStart',
        trace_id: r.trace_id,
        span_id: hexSpanId(r.span_id)!,
        span_name: r.span_name ?? '',
        parent_span_id: hexSpanId(r.parent_span_id),
        links: r.links === null ? null : (JSON.parse(r.links) as SpanStartRecord['links']),
        start_time_unix_nano: String(r.start_ns),
        severity_number: r.severity_number,
        severity_text: r.severity_text,
        event_type: r.event_type,
        attributes,
      });
    } else if (r.record_type === 'SpanEnd') {
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

export function spansToRecords(req: OtlpTraceRequest): Converted<SpanStartRecord | SpanEndRecord> {
  const { rows, rejected, errors } = spansToRows(req);
  return { records: rowsToRecords(rows) as (SpanStartRecord | SpanEndRecord)[], rejected, errors };
}

export function logsToRecords(req: OtlpLogsRequest, newEventId: () => string): Converted<LogRecordRecord> {
  const { rows, rejected, errors } = logsToRows(req, newEventId);
  return { records: rowsToRecords(rows) as LogRecordRecord[], rejected, errors };
}
