/**
 * JSONL telemetry read by DuckDB itself (read_json with an explicit column list), never row by row
 * in JS. Two key styles: the current snake_case envelope and the camelCase one of builds before
 * 2025-08. Envelope fields are read as VARCHAR and cast with TRY_CAST so that an odd value never
 * loses the record; malformed JSON is reported as file:line.
 */
import { availableParallelism } from 'node:os';
import { jsonForMessage } from './nesting.js';
import { sqlString } from '../store/db.js';
import { sqlFilePath } from '../store/file-path-sql.js';
import type { InputFile } from './detect.js';
import { cutText } from '../render/cut-text.js';
import { OBJECT_ATTRIBUTES } from '../telemetry/details.js';

/** Envelope field -> key in the file, per key style. */
const KEYS = {
  snake: {
    record_type: 'record_type', trace_id: 'trace_id', span_id: 'span_id', span_name: 'span_name',
    parent_span_id: 'parent_span_id', links: 'links', event_id: 'event_id', start: 'start_time_unix_nano',
    end: 'end_time_unix_nano', time: 'time_unix_nano', severity_number: 'severity_number',
    severity_text: 'severity_text', body: 'body', status: 'status', event_type: 'event_type', attributes: 'attributes',
  },
  camel: {
    record_type: 'recordType', trace_id: 'traceId', span_id: 'spanId', span_name: 'spanName',
    parent_span_id: 'parentSpanId', links: 'links', event_id: 'eventId', start: 'startTimeUnixNano',
    end: 'endTimeUnixNano', time: 'timeUnixNano', severity_number: 'severityNumber',
    severity_text: 'severityText', body: 'body', status: 'status', event_type: 'eventType', attributes: 'attributes',
  },
} as const;

/**
 * Fields read as another type than VARCHAR (a value that does not convert is an error of DuckDB's
 * reader). Times, severity and status code stay text: the reader's cast to an integer would round a
 * number with a fraction, read hex, binary, a sign or blanks as a number, and true and false as 1
 * and 0; the check sees them as written. Ids are JSON: read as text, a 16-digit number would pass
 * for a span id.
 */
const READ_TYPES = {
  trace_id: 'JSON', span_id: 'JSON', parent_span_id: 'JSON',
  links: 'JSON', attributes: 'JSON',
  status: 'STRUCT(code VARCHAR, message VARCHAR)',
} as const;

/**
 * An id read as JSON (DuckDB's reader would read a number as its digits): its text without the
 * quotes, and whether it is a string. The reader writes a string with escapes only where JSON needs
 * them, which no hex id does.
 */
const idRead = (col: string, as: string, normalize: (id: string) => string) => {
  const text = `CAST(${col} AS VARCHAR)`;
  return `${normalize(`substr(${text}, 2, strlen(${text}) - 2)`)} AS ${as}, prefix(${text}, '"') AS ${as}_string`;
};
const lower = (id: string) => `lower(${id})`;

/**
 * An integer read as text (`raw`) and cast (`n`) is not as written: a fraction, a boolean, hex, out of
 * range (or leading zeros, which the line check then finds valid).
 */
const notAsWritten = (raw: string, n: string) => `(${raw} IS NOT NULL AND (${n} IS NULL OR CAST(${n} AS VARCHAR) <> ${raw}))`;

/**
 * The reader takes NaN and Infinity for numbers (any case, with a sign) and keeps them as written: a
 * text field holds one as its text, a JSON one holds it bare. A text field that reads as one of the
 * usual spellings, or JSON text with NaN or Infinity (as Python and Java write them) in a value's
 * place, is looked at line by line, where a string that says "NaN" is found to be text.
 */
const NON_FINITE_SPELLINGS = ['NaN', 'nan', 'NAN', 'Infinity', 'infinity', 'INFINITY', 'inf', 'Inf', 'INF']
  .flatMap((w) => [w, `-${w}`])
  .map((w) => `'${w}'`)
  .join(', ');
// list_contains, not IN: DuckDB plans an IN of this many values as a join, which loses the input's order
const maybeNonFiniteText = (t: string) => `list_contains([${NON_FINITE_SPELLINGS}], ${t})`;
const maybeNonFiniteJson = (j: string) =>
  `((contains(${j}, 'NaN') OR contains(${j}, 'Infinity')) AND regexp_matches(${j}, '[:,\\[]-?(?i:nan|inf|infinity)[,}\\]]'))`;

/**
 * A structured attribute the model reads (OBJECT_ATTRIBUTES) given as another JSON type than an object
 * (JSON text in a string): the normalizer would read an empty detail, and a failed test would pass.
 * Looked for only in attributes with a key ending in `_detail"` (readJsonSql), so that few are parsed again.
 */
const anotherType = (field: string) =>
  `json_type(attributes, '$.${field}') NOT IN ('OBJECT', 'NULL')`;

/**
 * DuckDB's default largest record (16 MiB). Its reader cuts a file into buffers sized from this
 * limit, and one buffer is read by one thread: with a large limit a whole file can end up on one
 * thread. So loads start with the default and retry a file with LARGE_OBJECT_BYTES only when a
 * record is bigger.
 */
export const DEFAULT_OBJECT_BYTES = 16 * 1024 * 1024;
export const LARGE_OBJECT_BYTES = 256 * 1024 * 1024;

/** Rows in one of DuckDB's row groups. */
const ROW_GROUP_ROWS = 122_880;

/**
 * maximum_object_size for a file's read. DuckDB reads JSONL in buffers of this size, one batch each,
 * and an ordered insert copies a batch of fewer rows than a row group once more to merge it with its
 * neighbours. A big file gets buffers of a row group of its lines, as long as each thread still gets
 * two or more of them.
 * For in-memory models only (src/store/load.ts): in a --db file those row groups are written to disk
 * as they come, and derive's updates of them cost a rewrite at the checkpoint.
 */
export function jsonBufferBytes(file: InputFile, threads = availableParallelism()): number {
  if (file.gzip || !file.bytesPerLine) return DEFAULT_OBJECT_BYTES;
  const rowGroup = Math.ceil((file.bytesPerLine * ROW_GROUP_ROWS * 1.1) / 2 ** 20) * 2 ** 20;
  if (rowGroup <= DEFAULT_OBJECT_BYTES || rowGroup > LARGE_OBJECT_BYTES || file.size < rowGroup * 2 * threads) return DEFAULT_OBJECT_BYTES;
  return rowGroup;
}

/** DuckDB's error for a record over maximum_object_size. */
export function isObjectSizeError(message: string): boolean {
  return message.includes('maximum_object_size');
}

/**
 * Whether DuckDB's reader reads the key at `path` (dotted) of a record: an envelope key, or a key of
 * `status`. It refuses a line that writes such a key twice, and keeps the first of any other.
 */
export function readerReadsKey(path: string, keyStyle: 'snake' | 'camel'): boolean {
  const k = KEYS[keyStyle];
  return (Object.values(k) as string[]).includes(path) || path === `${k.status}.code` || path === `${k.status}.message`;
}

const SNAKE_OF_CAMEL = new Map(Object.entries(KEYS.camel).map(([field, key]) => [key as string, KEYS.snake[field as keyof typeof KEYS.snake] as string]));
const SNAKE_OF_CAMEL_LINK = new Map([['traceId', 'trace_id'], ['spanId', 'span_id']]);
const renamed = (o: object, names: Map<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [names.get(k) ?? k, v]));

/** A record of the camelCase envelope (builds before 2025-08) in the snake_case one, keys in their order (a link's too). */
export function snakeEnvelope(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const out = renamed(v, SNAKE_OF_CAMEL);
  if (Array.isArray(out.links)) out.links = out.links.map((l: unknown) => (l !== null && typeof l === 'object' && !Array.isArray(l) ? renamed(l, SNAKE_OF_CAMEL_LINK) : l));
  return out;
}

/** Record types of the envelope (reference/telemetry.md 2.1). */
export const RECORD_TYPES = ['SpanStart', 'SpanEnd', 'LogRecord'] as const;

/**
 * What the model needs of a record to hold it (a malformed or misshapen record is an input error, or a
 * skipped line with --lenient): its record type; a trace and span id on a span; ids, times, severity,
 * attributes, status and links of the right JSON type where given. The wording is validate's; the
 * finer conformance rules (key order, enum spellings, ...) are validate's alone.
 */
export function recordProblem(v: unknown, keyStyle: 'snake' | 'camel'): { field: string; reason: string } | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { field: '-', reason: 'not a JSON object' };
  const k = KEYS[keyStyle];
  const r = v as Record<string, unknown>;
  const got = (x: unknown) => `(got ${cutText(jsonForMessage(x), 60)})`;
  const rt = r[k.record_type];
  if (rt === undefined || rt === null) return { field: k.record_type, reason: 'missing' };
  if (!(RECORD_TYPES as readonly unknown[]).includes(rt)) return { field: k.record_type, reason: `must be SpanStart, SpanEnd or LogRecord ${got(rt)}` };
  if (rt !== 'LogRecord') {
    for (const f of [k.trace_id, k.span_id]) {
      if (!(f in r)) return { field: f, reason: `missing (required on ${rt as string})` };
      if (r[f] === null) return { field: f, reason: `must not be null on a ${rt as string}` };
    }
  }
  const ids: [string, RegExp, string][] = [
    [k.trace_id, /^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/, '32 hex digits (or a UUID)'],
    [k.span_id, /^[0-9a-fA-F]{16}$/, '16 hex digits'],
    [k.parent_span_id, /^[0-9a-fA-F]{16}$/, '16 hex digits'],
  ];
  for (const [f, re, what] of ids) {
    const x = r[f];
    if (x !== undefined && x !== null && !(typeof x === 'string' && re.test(x))) return { field: f, reason: `must be ${what} ${got(x)}` };
  }
  for (const f of [k.start, k.end, k.time]) {
    const x = r[f];
    if (x !== undefined && x !== null && !isInteger(x, 64)) return { field: f, reason: `must be nanoseconds, a string of decimal digits ${got(x)}` };
  }
  const sn = r[k.severity_number];
  if (sn !== undefined && sn !== null && !isInteger(sn, 32)) return { field: k.severity_number, reason: `must be an integer ${got(sn)}` };
  const kinds: [string, 'object' | 'array'][] = [[k.attributes, 'object'], [k.status, 'object'], [k.links, 'array']];
  for (const [f, kind] of kinds) {
    const x = r[f];
    if (x === undefined || x === null) continue;
    if (kind === 'array' ? !Array.isArray(x) : typeof x !== 'object' || Array.isArray(x)) return { field: f, reason: `must be an ${kind} ${got(x)}` };
  }
  // the structured attributes the model reads: another type (JSON text in a string) would lose what they say
  const a = r[k.attributes] as Record<string, unknown> | null | undefined;
  if (a) {
    for (const f of OBJECT_ATTRIBUTES) {
      const x = a[f];
      if (x !== undefined && x !== null && (typeof x !== 'object' || Array.isArray(x))) return { field: `${k.attributes}.${f}`, reason: `must be an object ${got(x)}` };
    }
  }
  const code = (r[k.status] as Record<string, unknown> | null | undefined)?.code;
  if (code !== undefined && code !== null && !isInteger(code, 32)) return { field: `${k.status}.code`, reason: `must be an integer ${got(code)}` };
  // an unsigned enum (OTLP's status codes; the engine's Parquet column is UInt32)
  if (code !== undefined && code !== null && BigInt(code as number | string) < 0n) return { field: `${k.status}.code`, reason: `must not be negative ${got(code)}` };
  return undefined;
}

/** An integer as JSON carries one (a number, or a string of decimal digits) that fits `bits` signed bits, as the model stores it. */
function isInteger(x: unknown, bits: 32 | 64): boolean {
  // the usual cases without a BigInt: digits below 2^63 (equal lengths compare as numbers), a small number
  const digits = bits === 64 && typeof x === 'string' && (x.length < 19 || (x.length === 19 && x < '9223372036854775808'));
  if (digits ? /^\d+$/.test(x) : typeof x === 'number' && Number.isSafeInteger(x) && Math.abs(x) < 2 ** (bits - 1)) return true;
  if (typeof x === 'number' && !Number.isInteger(x)) return false;
  if (typeof x === 'string' && !/^-?\d{1,20}$/.test(x)) return false;
  if (typeof x !== 'number' && typeof x !== 'string') return false;
  const n = BigInt(x);
  const max = 1n << BigInt(bits - 1);
  return n >= -max && n < max;
}

/**
 * The records of a JSONL file, read by DuckDB. Status is read as a struct: a value that does not
 * convert stops the read (the load then finds its line). `checks`: a record recordProblem would
 * reject for what DuckDB's reader shows of it (ids that are not strings of hex digits of their
 * length, times, severity and status code that do not cast back to their text, attributes and
 * links by their first character) is read with record_type NULL, a row the load
 * then reports as a malformed line. DuckDB's reader is forgiving where a JSON parser is not (trailing
 * commas, NaN), and reads a number where a string belongs as its text (so ids are read as JSON).
 */
export function readJsonSql(file: InputFile, opts: { maxObjectBytes?: number; checks?: boolean; path?: string; files?: readonly string[] }): string {
  const k = KEYS[file.keyStyle];
  const columns = Object.entries(k)
    .map(([field, key]) => `${sqlString(key)}: '${READ_TYPES[field as keyof typeof READ_TYPES] ?? 'VARCHAR'}'`)
    .join(', ');
  const q = (key: string) => `"${key}"`;
  const problem = `record_type NOT IN (${RECORD_TYPES.map((t) => `'${t}'`).join(', ')})
      OR (record_type <> 'LogRecord' AND (trace_id IS NULL OR span_id IS NULL))
      OR NOT trace_id_string OR NOT span_id_string OR NOT parent_span_id_string
      OR NOT regexp_full_match(trace_id, '[0-9a-f]{32}') OR NOT regexp_full_match(span_id, '[0-9a-f]{16}')
      OR NOT regexp_full_match(parent_span_id, '[0-9a-f]{16}')
      OR ${notAsWritten('severity_text_number', 'severity_number')} OR ${notAsWritten('status_code_text', 'status_code')} OR status_code < 0
      OR ${notAsWritten('start_text', 'start_ns')} OR ${notAsWritten('end_text', 'end_ns')} OR ${notAsWritten('time_text', 'time_ns')}
      OR NOT prefix(CAST(attributes AS VARCHAR), '{') OR NOT prefix(CAST(links AS VARCHAR), '[')
      OR ${['span_name', 'event_type', 'event_id', 'severity_text', 'body', 'status_message'].map(maybeNonFiniteText).join(' OR ')}
      OR ${maybeNonFiniteJson('CAST(attributes AS VARCHAR)')} OR ${maybeNonFiniteJson('CAST(links AS VARCHAR)')}
      OR (contains(CAST(attributes AS VARCHAR), '_detail"') AND (${OBJECT_ATTRIBUTES.map(anotherType).join(' OR ')}))`;
  // `files`: plain files of file's key style read at once, each row's file_id the place of its file in the list, from 0
  const paths = opts.files ? `[${opts.files.map(sqlFilePath).join(', ')}]` : undefined;
  // Three steps, so that nothing is computed twice: read, cast, check.
  const read = `SELECT
      ${paths ? `CAST(list_position(${paths}, filename) - 1 AS INTEGER)` : 'CAST($file_id AS INTEGER)'} AS file_id,
      ${q(k.record_type)} AS record_type,
      ${idRead(q(k.trace_id), 'trace_id', (id) => `rl_trace_id(${id})`)},
      ${idRead(q(k.span_id), 'span_id', lower)},
      ${idRead(q(k.parent_span_id), 'parent_span_id', lower)},
      ${q(k.span_name)} AS span_name,
      ${q(k.event_type)} AS event_type,
      ${q(k.event_id)} AS event_id,
      ${q(k.start)} AS start_text, ${q(k.end)} AS end_text, ${q(k.time)} AS time_text,
      ${q(k.severity_number)} AS severity_text_number,
      ${q(k.severity_text)} AS severity_text,
      ${q(k.status)}.code AS status_code_text, ${q(k.status)}.message AS status_message,
      ${q(k.body)} AS body,
      ${q(k.links)} AS links,
      ${q(k.attributes)} AS attributes
    FROM read_json(${paths ?? sqlFilePath(opts.path ?? file.path)}, format = 'newline_delimited', columns = {${columns}}, filename = ${paths !== undefined},
                   compression = '${file.gzip && opts.path === undefined ? 'gzip' : 'uncompressed'}', maximum_object_size = ${opts.maxObjectBytes ?? DEFAULT_OBJECT_BYTES},
                   ignore_errors = false)`;
  const cast = `SELECT *, TRY_CAST(start_text AS BIGINT) AS start_ns, TRY_CAST(end_text AS BIGINT) AS end_ns, TRY_CAST(time_text AS BIGINT) AS time_ns,
      TRY_CAST(severity_text_number AS INTEGER) AS severity_number, TRY_CAST(status_code_text AS INTEGER) AS status_code
    FROM (${read})`;
  return `SELECT file_id, ${opts.checks ? `CASE WHEN ${problem} THEN NULL ELSE record_type END` : 'record_type'} AS record_type,
      trace_id, span_id, parent_span_id, span_name, event_type, event_id, start_ns, end_ns, time_ns, severity_number,
      severity_text, status_code, status_message, body, links, attributes
    FROM (${cast})`;
}

/** DuckDB's message for a malformed line -> line number and reason. */
export function parseJsonError(message: string): { line?: number; reason: string } {
  const m = /in line (\d+):\s*(.*)$/s.exec(message);
  if (m) return { line: Number(m[1]), reason: m[2]!.trim() || 'malformed JSON' };
  const r = /Malformed JSON[^:]*:\s*(.*)$/s.exec(message);
  return { reason: (r ? r[1]! : message).trim() };
}
