/**
 * JSONL telemetry read by DuckDB itself (read_json with an explicit column list), never row by row
 * in JS. Two key styles: the current snake_case envelope and the camelCase one of builds before
 * 2025-08. Envelope fields are read as VARCHAR and cast with TRY_CAST so that an odd value never
 * loses the record; malformed JSON is reported as file:line.
 */
import { availableParallelism } from 'node:os';
import { sqlString } from '../store/db.js';
import type { InputFile } from './detect.js';

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

const JSON_FIELDS = new Set(['links', 'status', 'attributes']);

/**
 * DuckDB's default largest record (16 MiB). Its reader cuts a file into buffers sized from this
 * limit, and one buffer is read by one thread: at 256 MiB a 200 MB file was read by one thread
 * (measured: 2.9 s against 0.8 s). So loads start with the default and retry a file with
 * LARGE_OBJECT_BYTES only when a record is bigger.
 */
export const DEFAULT_OBJECT_BYTES = 16 * 1024 * 1024;
export const LARGE_OBJECT_BYTES = 256 * 1024 * 1024;

/** Rows in one of DuckDB's row groups. */
const ROW_GROUP_ROWS = 122_880;

/**
 * maximum_object_size for a file's read. DuckDB reads JSONL in buffers of this size, one batch each,
 * and an ordered insert copies a batch of fewer rows than a row group once more to merge it with its
 * neighbours: on a 1 GB file of 950-byte lines that copy was a sixth of the insert (16 MiB buffers:
 * 1.71-1.77 s; 112-128 MiB, a row group or more per buffer: 1.41-1.53 s; 96 MiB: 1.75 s). A big file
 * gets buffers of a row group of its lines, as long as each thread still gets two or more of them.
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

export function readJsonSql(file: InputFile, opts: { lenient: boolean; maxObjectBytes?: number }): string {
  const k = KEYS[file.keyStyle];
  const columns = Object.entries(k)
    .map(([field, key]) => `${sqlString(key)}: '${JSON_FIELDS.has(field) ? 'JSON' : 'VARCHAR'}'`)
    .join(', ');
  const q = (key: string) => `"${key}"`;
  return `SELECT
      CAST($file_id AS INTEGER) AS file_id,
      ${q(k.record_type)} AS record_type,
      rl_trace_id(${q(k.trace_id)}) AS trace_id,
      lower(${q(k.span_id)}) AS span_id,
      lower(${q(k.parent_span_id)}) AS parent_span_id,
      ${q(k.span_name)} AS span_name,
      ${q(k.event_type)} AS event_type,
      ${q(k.event_id)} AS event_id,
      TRY_CAST(${q(k.start)} AS BIGINT) AS start_ns,
      TRY_CAST(${q(k.end)} AS BIGINT) AS end_ns,
      TRY_CAST(${q(k.time)} AS BIGINT) AS time_ns,
      TRY_CAST(${q(k.severity_number)} AS INTEGER) AS severity_number,
      ${q(k.severity_text)} AS severity_text,
      TRY_CAST(json_extract_string(${q(k.status)}, '$.code') AS INTEGER) AS status_code,
      json_extract_string(${q(k.status)}, '$.message') AS status_message,
      ${q(k.body)} AS body,
      ${q(k.links)} AS links,
      ${q(k.attributes)} AS attributes
    FROM read_json(${sqlString(file.path)}, format = 'newline_delimited', columns = {${columns}},
                   compression = '${file.gzip ? 'gzip' : 'uncompressed'}', maximum_object_size = ${opts.maxObjectBytes ?? DEFAULT_OBJECT_BYTES},
                   ignore_errors = ${opts.lenient ? 'true' : 'false'})`;
}

/** DuckDB's message for a malformed line -> line number and reason. */
export function parseJsonError(message: string): { line?: number; reason: string } {
  const m = /in line (\d+):\s*(.*)$/s.exec(message);
  if (m) return { line: Number(m[1]), reason: m[2]!.trim() || 'malformed JSON' };
  const r = /Malformed JSON[^:]*:\s*(.*)$/s.exec(message);
  return { reason: (r ? r[1]! : message).trim() };
}
