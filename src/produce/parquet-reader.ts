/**
 * Reads an engine-layout Parquet file back into JSONL records (for `convert` and round-trip
 * tests). DuckDB streams the rows in chunks, converting ids to hex and timestamps to decimal
 * nanoseconds in SQL so no 64-bit value passes through a JS number. (parquet-wasm's async Blob
 * reader traps under Node, and its sync reader needs the whole file in memory.)
 */
import { NO_EXTENSION_FETCH, duckdb } from '../store/duckdb.js';
import { sqlFilePath } from '../store/file-path-sql.js';
import { eventKey } from '../telemetry/event-types.js';
import { InputError, engineMessage } from '../errors.js';
import { errorOfCutStream, guardStream } from '../store/stream-guard.js';
import { ATTRIBUTE_COLUMNS, ATTRIBUTE_KIND, attributesLayoutNote, joinAttributes, parquetColumnsProblem, structFields } from './parquet-layout.js';
import { loneSurrogate, loneSurrogateReason } from '../ingest/lone-surrogate.js';
import { BOM_IN_JSON, NOT_JSON } from '../ingest/parquet.js';
import { TOO_DEEP, tooDeep } from '../ingest/nesting.js';
import { KEY_TWICE, keysWrittenTwice } from './line-form.js';
import { convertProblem, type RecordProblem } from './record-check.js';
import { SOURCE_LINE, sortKeys, type AttrValue, type JsonlRecord, type Link, type Located } from './record.js';

export function bigIntToSpanId(v: bigint): string {
  return BigInt.asUintN(64, v).toString(16).padStart(16, '0');
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Text as the file holds it: DuckDB's client decodes text dropping a leading U+FEFF, so one more is
 * put before it (a leading U+FEFF in JSON text, which is not JSON, is then seen as a load sees it).
 */
const keepBom = (e: string) => `CASE WHEN starts_with(${e}, chr(65279)) THEN chr(65279) || ${e} ELSE ${e} END`;

const TOP = ['record_type', 'trace_id', 'span_id', 'event_id', 'span_name', 'parent_span_id', 'links', 'start_time_unix_nano', 'end_time_unix_nano',
  'time_unix_nano', 'severity_number', 'severity_text', 'body', 'status_code', 'status_message', 'event_type'] as const;

function topExpr(name: string, present: Set<string>): string {
  if (!present.has(name)) return `NULL AS ${ident(name)}`;
  switch (name) {
    case 'span_id':
    case 'parent_span_id':
      return `printf('%016x', ${ident(name)}) AS ${ident(name)}`;
    case 'start_time_unix_nano':
    case 'end_time_unix_nano':
    case 'time_unix_nano':
      return `epoch_ns(${ident(name)})::VARCHAR AS ${ident(name)}`;
    case 'links':
      return `CASE WHEN links IS NULL THEN NULL ELSE to_json(list_transform(links, l -> struct_pack(trace_id := l.trace_id, span_id := printf('%016x', l.span_id), json_payload := l.json_payload)))::VARCHAR END AS links`;
    default:
      return name === 'severity_number' || name === 'status_code'
        ? `${ident(name)}::BIGINT AS ${ident(name)}`
        : `${keepBom(`${ident(name)}::VARCHAR`)} AS ${ident(name)}`;
  }
}

/**
 * Records of one Parquet file, in file order. A row that is not a record throws InputError by its
 * row number, or, with `onBadRow`, is told to it and left out.
 */
export async function* readParquetRecords(
  path: string,
  opts: {
    onNote?: (note: RecordProblem) => void;
    onBadRow?: (row: number, problem: RecordProblem) => void;
    /** the part of the rows read so far (0..1), for a progress bar */
    onRead?: (fraction: number) => void;
  } = {},
): AsyncGenerator<JsonlRecord> {
  const db = await duckdb.DuckDBInstance.create(':memory:', NO_EXTENSION_FETCH);
  const con = await db.connect();
  try {
    const src = `read_parquet(${sqlFilePath(path)})`;
    const desc = await con.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
    const described = desc.getRowsJS().map((r) => ({ name: String(r[0]), type: String(r[1]) }));
    const present = new Set(described.map((c) => c.name));
    const problem = parquetColumnsProblem(described);
    if (problem) throw new InputError(problem.reason, path, undefined, problem.field);
    const attrType = described.find((c) => c.name === 'attributes')!.type;
    const note = attributesLayoutNote(attrType);
    if (note) opts.onNote?.(note);
    const attrFields = structFields(attrType);
    const attrCols = ATTRIBUTE_COLUMNS.filter((c) => attrFields.has(c.name));
    // fields of another writer's struct (a plain copy of JSONL) are carried as they are, as JSON
    const outside = [...attrFields.keys()].filter((f) => !ATTRIBUTE_KIND.has(f));
    const cols = [
      ...TOP.map((n) => topExpr(n, present)),
      ...attrCols.map((c) => {
        const e = `attributes.${ident(c.name)}`;
        if (c.kind === 'dict' || c.kind === 'lstr' || c.kind === 'json') return `${keepBom(`${e}::VARCHAR`)} AS ${ident('a_' + c.name)}`;
        return `${e}${c.kind === 'u64' ? '::VARCHAR' : c.kind === 'bool' ? '' : '::BIGINT'} AS ${ident('a_' + c.name)}`;
      }),
      ...outside.map((f) => `to_json(attributes.${ident(f)})::VARCHAR AS ${ident('x_' + f)}`),
    ];
    // (the row count is in the file's footer; asked before the stream, which another query on the connection would end)
    const rows = opts.onRead ? Number((await con.runAndReadAll(`SELECT count(*) FROM ${src}`)).getRowsJS()[0]![0]) : 0;
    const sql = `SELECT ${cols.join(', ')} FROM ${src}`;
    const guard = await guardStream(con);
    const result = await con.stream(sql);
    const names = [...TOP, ...attrCols.map((c) => c.name), ...outside.map((f) => OUTSIDE + f)];
    let n = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) {
        // (a row group past the first ones that cannot be read ends the stream as its end does)
        if (!(await guard.whole())) throw await errorOfCutStream(con, sql);
        break;
      }
      if (rows > 0) opts.onRead?.(n / rows);
      for (const row of chunk.getRows()) {
        n++;
        // a file of another writer (or of one that let a bad record through) is held to JSONL's rules, by its row as a load names it
        const r = toRecord(names, row.map(jsValue));
        const p = r instanceof RowFault ? r.problem : convertProblem(r);
        if (p && opts.onBadRow) opts.onBadRow(n, p);
        else if (p) throw new InputError(p.reason, path, n, p.field);
        if (p) continue;
        (r as Located)[SOURCE_LINE] = n;
        yield r as JsonlRecord;
      }
    }
  } catch (e) {
    // DuckDB's reader refused the file (a damaged page, not Parquet): said as load and validate say it
    if (e instanceof InputError) throw e;
    throw new InputError(`not a readable Parquet file: ${engineMessage(e)}`, path);
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

function jsValue(v: unknown): unknown {
  return typeof v === 'bigint' ? Number(v) : v;
}

/** Why a row cannot be read as a record. */
class RowFault {
  constructor(readonly problem: RecordProblem) {}
}

/**
 * `read()` of a row's JSON `texts`, or a RowFault when one of them is not JSON, writes a key twice
 * (a load reads the first, JSON.parse the last: refused as in a JSONL line), or nests too deep.
 */
function fromJson<T>(field: string, texts: (string | null)[], read: () => T): T | RowFault {
  try {
    for (const t of texts) {
      if (!t) continue;
      if (t.startsWith('\ufeff')) return new RowFault({ field, reason: `${NOT_JSON}: ${BOM_IN_JSON}` });
      const value: unknown = JSON.parse(t);
      // (sorting its keys, and the writers, would run out of call stack)
      if (tooDeep(value) !== undefined) return new RowFault({ field, reason: TOO_DEEP });
      const lone = loneSurrogate(t, value);
      if (lone) return new RowFault({ field, reason: `${NOT_JSON}: ${loneSurrogateReason(lone)}` });
      const twice = keysWrittenTwice(t, value)[0];
      if (twice !== undefined) return new RowFault({ field, reason: `${KEY_TWICE}: ${twice}` });
    }
    return read();
  } catch (e) {
    if (e instanceof SyntaxError) return new RowFault({ field, reason: NOT_JSON });
    throw e;
  }
}

/** The prefix of the names of attribute fields outside the layout among a row's columns. */
const OUTSIDE = '\0outside:';

function toRecord(names: readonly string[], row: unknown[]): JsonlRecord | RowFault {
  const r: Record<string, unknown> = {};
  for (let i = 0; i < TOP.length; i++) r[names[i]!] = row[i];
  const cols = new Map<string, AttrValue>();
  const outside: [string, string][] = [];
  let payload: string | null = null;
  for (let i = TOP.length; i < names.length; i++) {
    const v = row[i];
    if (v === null || v === undefined) continue;
    const name = names[i]!;
    if (name === 'json_payload') payload = v as string;
    else if (name.startsWith(OUTSIDE)) outside.push([name.slice(OUTSIDE.length), v as string]);
    else cols.set(name, v as AttrValue);
  }
  const et = r.event_type as string;
  // engine order (alphabetical), so records read back look exactly like the engine's JSONL
  const joined = fromJson('attributes.json_payload', [payload], () => joinAttributes(eventKey(et), cols, payload));
  if (joined instanceof RowFault) return joined;
  for (const [field, text] of outside) {
    const v = fromJson(`attributes.${field}`, [text], () => JSON.parse(text) as AttrValue);
    if (v instanceof RowFault) return v;
    joined[field] ??= v;
  }
  const attributes = sortKeys(joined);
  const rt = r.record_type as JsonlRecord['record_type'];
  // a record type of no envelope: convertProblem names it
  if (rt !== 'LogRecord' && rt !== 'SpanStart' && rt !== 'SpanEnd') return r as unknown as JsonlRecord;
  if (rt === 'LogRecord') {
    return {
      record_type: rt, trace_id: r.trace_id as string, span_id: r.span_id as string | null, span_name: r.span_name as string | null,
      event_id: r.event_id as string, time_unix_nano: r.time_unix_nano as string, severity_number: r.severity_number as number,
      severity_text: r.severity_text as string, body: (r.body as string | null) ?? '', event_type: et, attributes,
    };
  }
  const linked = r.links === null ? null : (JSON.parse(r.links as string) as { trace_id: string; span_id: string; json_payload: string | null }[]);
  const links = fromJson('links.json_payload', linked?.map((l) => l.json_payload) ?? [], () =>
    linked?.map((l): Link => ({ trace_id: l.trace_id, span_id: l.span_id, attributes: l.json_payload ? (JSON.parse(l.json_payload) as Link['attributes']) : {} })) ?? null);
  if (links instanceof RowFault) return links;
  const base = {
    trace_id: r.trace_id as string, span_id: r.span_id as string, span_name: r.span_name as string, parent_span_id: r.parent_span_id as string | null,
    links, start_time_unix_nano: r.start_time_unix_nano as string,
  };
  if (rt === 'SpanStart') {
    return { record_type: rt, ...base, severity_number: r.severity_number as number, severity_text: r.severity_text as string, event_type: et, attributes };
  }
  return {
    record_type: 'SpanEnd', ...base, end_time_unix_nano: r.end_time_unix_nano as string, severity_number: r.severity_number as number,
    severity_text: r.severity_text as string, status: r.status_code === null ? null : { message: r.status_message as string | null, code: r.status_code as number },
    event_type: et, attributes,
  };
}
