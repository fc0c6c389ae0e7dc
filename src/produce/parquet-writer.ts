/**
 * Streams JSONL records into a Parquet file in the engine's layout: records are cut into Arrow
 * record batches (built column by column), each batch crosses into parquet-wasm as an IPC stream,
 * and the wasm ArrowWriter (the same arrow-rs writer the engine uses) streams the file out.
 * Memory stays bounded by one batch plus the open row group.
 */
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RecordBatch, RecordBatchStreamWriter, Schema, type Data } from 'apache-arrow';
import * as wasm from 'parquet-wasm';
import { eventKey } from '../telemetry/event-types.js';
import { arrowType, columnBuilder, Field, List, listData, Struct, structData, U64Column, type ColumnBuilder } from './arrow-columns.js';
import { ATTRIBUTE_COLUMNS, JSON_EXTENSION_METADATA, TOP_COLUMNS, splitAttributes, type ColSpec } from './parquet-layout.js';
import { SOURCE_LINE, type JsonlRecord, type Located } from './record.js';
import { besideFile, openWriteStream, removeOnStop } from './output-claim.js';
import { notWritten } from './output-path.js';
import { makeFolders } from '../folders.js';

/** A record the layout cannot hold: why (`field: reason`), and where: its line in the file it was read from, when known, else its count. */
export class RecordFitError extends Error {
  constructor(readonly reason: string, readonly line: number | undefined, index: number) {
    super(`${line === undefined ? `record ${index}` : `line ${line}`}: ${reason}`);
  }
}

export interface ParquetWriteOptions {
  /** rows per Arrow batch handed to the writer (the engine buffers 1,024; larger is faster here) */
  batchRows?: number;
  /** rows per Parquet row group (parquet-rs default 1,048,576) */
  rowGroupRows?: number;
}

const HEX16 = /^[0-9a-f]{16}$/;
const KNOWN_TYPES: ReadonlySet<string> = new Set(['SpanStart', 'SpanEnd', 'LogRecord']);

export function spanIdToBigInt(hex: string | null | undefined, field = 'span_id'): bigint | null {
  if (hex === null || hex === undefined) return null;
  if (!HEX16.test(hex)) throw new Error(`${field}: not 16 lower-case hex digits: ${JSON.stringify(hex)}`);
  return BigInt('0x' + hex);
}

const DEC = /^\d{1,20}$/;

const eventKeys = new Map<string, string | null>();
/** eventKey() per distinct event_type (a regex per row is measurable). */
function eventKeyCached(t: string): string | null {
  let k = eventKeys.get(t);
  if (k === undefined) eventKeys.set(t, (k = eventKey(t)));
  return k;
}

export function nanosToBigInt(s: string | null | undefined, field: string): bigint | null {
  if (s === null || s === undefined) return null;
  if (typeof s !== 'string' || !DEC.test(s)) throw new Error(`${field}: not a decimal string: ${JSON.stringify(s)}`);
  return BigInt(s);
}

function field(c: ColSpec): Field {
  const f = new Field(c.name, arrowType(c.kind), c.nullable, c.kind === 'json' ? new Map(JSON_EXTENSION_METADATA) : undefined);
  return f;
}

/** The full Arrow schema of the engine's Parquet file. */
export function engineSchema(): Schema {
  const fields: Field[] = [];
  for (const c of TOP_COLUMNS) {
    fields.push(field(c));
    if (c.name === 'parent_span_id') fields.push(linksField());
  }
  fields.push(new Field('attributes', new Struct(ATTRIBUTE_COLUMNS.map(field)), false));
  return new Schema(fields);
}

function linksField(): Field {
  const item = new Struct([
    field({ name: 'trace_id', kind: 'dict', nullable: false }),
    field({ name: 'span_id', kind: 'u64', nullable: false }),
    field({ name: 'json_payload', kind: 'json', nullable: true }),
  ]);
  return new Field('links', new List(new Field('item', item, true)), true);
}

/** Accumulates records column by column and emits one Arrow RecordBatch. */
export class BatchBuilder {
  readonly top: Map<string, ColumnBuilder>;
  readonly attrs: ColumnBuilder[];
  readonly attrIndex: Map<string, number>;
  readonly attrIsU64: boolean[];
  readonly linkCols: ColumnBuilder[];
  readonly linkCounts: number[] = [];
  length = 0;
  /** top-level columns the layout holds no null in (TOP_COLUMNS is not yet defined at this module's load: parquet-layout imports it) */
  private readonly required = TOP_COLUMNS.filter((c) => !c.nullable).map((c) => c.name as keyof JsonlRecord);
  // the top-level builders, held directly (a Map lookup per cell costs more than the cell)
  private readonly c: Record<string, ColumnBuilder>;

  constructor(readonly schema: Schema) {
    this.top = new Map();
    for (const f of schema.fields) if (f.name !== 'links' && f.name !== 'attributes') this.top.set(f.name, columnBuilder(f.type, f.name));
    this.c = Object.fromEntries(this.top);
    const attrType = schema.fields.find((f) => f.name === 'attributes')!.type as Struct;
    this.attrs = attrType.children.map((f) => columnBuilder(f.type, `attributes.${f.name}`));
    this.attrIndex = new Map(attrType.children.map((f, i) => [f.name, i]));
    this.attrIsU64 = ATTRIBUTE_COLUMNS.map((c) => c.kind === 'u64');
    const linkItem = (schema.fields.find((f) => f.name === 'links')!.type as List).valueType as Struct;
    this.linkCols = linkItem.children.map((f) => columnBuilder(f.type, `links.${f.name}`));
  }

  push(r: JsonlRecord): void {
    // (the wasm writer's own complaint about a null there is an opaque "Dyn casting error")
    for (const f of this.required) if (r[f] === null || r[f] === undefined) throw new Error(`${f}: missing (the engine's Parquet layout requires it)`);
    if (!KNOWN_TYPES.has(r.record_type)) throw new Error(`record_type: must be SpanStart, SpanEnd or LogRecord (got ${JSON.stringify(r.record_type)})`);
    const c = this.c;
    c.record_type!.push(r.record_type);
    c.trace_id!.push(r.trace_id);
    (c.span_id as U64Column).pushHex(r.span_id, 'span_id');
    c.event_id!.push(r.record_type === 'LogRecord' ? r.event_id : null);
    c.span_name!.push(r.span_name);
    if (r.record_type === 'LogRecord') {
      c.parent_span_id!.push(null);
      this.linkCounts.push(-1);
      c.start_time_unix_nano!.push(null);
      c.end_time_unix_nano!.push(null);
      c.time_unix_nano!.push(nanosToBigInt(r.time_unix_nano, 'time_unix_nano'));
    } else {
      (c.parent_span_id as U64Column).pushHex(r.parent_span_id, 'parent_span_id');
      const links = r.links;
      if (links) {
        for (const l of links) {
          this.linkCols[0]!.push(l.trace_id);
          (this.linkCols[1] as U64Column).pushHex(l.span_id, 'links.span_id');
          this.linkCols[2]!.push(JSON.stringify(l.attributes ?? {}));
        }
      }
      this.linkCounts.push(links ? links.length : -1);
      c.start_time_unix_nano!.push(nanosToBigInt(r.start_time_unix_nano, 'start_time_unix_nano'));
      c.end_time_unix_nano!.push(r.record_type === 'SpanEnd' ? nanosToBigInt(r.end_time_unix_nano, 'end_time_unix_nano') : null);
      c.time_unix_nano!.push(null);
    }
    c.severity_number!.push(r.severity_number);
    c.severity_text!.push(r.severity_text);
    c.body!.push(r.record_type === 'LogRecord' ? r.body : null);
    const st = r.record_type === 'SpanEnd' ? r.status : null;
    c.status_code!.push(st ? st.code : null);
    c.status_message!.push(st ? st.message : null);
    c.event_type!.push(r.event_type);

    const split = splitAttributes(eventKeyCached(r.event_type), r.attributes ?? {});
    const row = this.length;
    this.attrs[0]!.push(split.payload);
    for (const [col, v] of split.columns) {
      const i = this.attrIndex.get(col)!;
      const b = this.attrs[i]!;
      // Most attribute columns are null for most events: nulls are filled in lazily.
      b.padTo(row);
      // u64 attributes are decimal strings in JSONL (already checked by splitAttributes).
      b.push(this.attrIsU64[i] ? BigInt(v as string) : v);
    }
    this.length++;
  }

  finish(): RecordBatch {
    const children: Data[] = [];
    for (const f of this.schema.fields) {
      if (f.name === 'links') {
        const item = (f.type as List).valueType as Struct;
        const n = this.linkCols[0]!.length;
        children.push(listData(f.type as List, this.linkCounts, structData(item, n, this.linkCols.map((c) => c.finish()))));
      } else if (f.name === 'attributes') {
        for (const b of this.attrs) b.padTo(this.length);
        children.push(structData(f.type as Struct, this.length, this.attrs.map((c) => c.finish())));
      } else children.push(this.top.get(f.name)!.finish());
    }
    const data = structData(new Struct(this.schema.fields), this.length, children);
    return new RecordBatch(this.schema, data as Data<Struct>);
  }
}

async function* iterate<T>(src: Iterable<T> | AsyncIterable<T>): AsyncGenerator<T> {
  yield* src as AsyncIterable<T>;
}

/** Long, mostly unique text: dictionary encoding only costs time there. */
const NO_DICTIONARY = ['span_name', 'event_id', 'body', 'status_message', 'attributes.json_payload', 'attributes.content', 'attributes.content_hash',
  'attributes.query_id', 'attributes.relative_path', 'links.list.item.json_payload'];

/** SNAPPY, otherwise parquet-rs defaults like the engine (row groups of 1,048,576 rows, page statistics). */
function writerProperties(opts: ParquetWriteOptions): wasm.WriterProperties {
  let b = new wasm.WriterPropertiesBuilder().setCompression(wasm.Compression.SNAPPY).setMaxRowGroupSize(opts.rowGroupRows ?? 1_048_576);
  for (const c of NO_DICTIONARY) b = b.setColumnDictionaryEnabled(c, false);
  return b.build();
}

/**
 * Write records (an array or any async iterable, consumed lazily) to `path` as engine-layout
 * Parquet. The file appears atomically (written beside and renamed) because a Parquet file is only
 * readable once its footer is written.
 */
export async function writeParquetFile(
  records: JsonlRecord[] | Iterable<JsonlRecord> | AsyncIterable<JsonlRecord>,
  path: string,
  opts: ParquetWriteOptions = {},
): Promise<{ records: number }> {
  const batchRows = opts.batchRows ?? 65_536;
  const schema = engineSchema();
  const it = iterate(records);
  let count = 0;
  let done = false;
  // An error of the records themselves (a malformed line, a bad id) reaches the wasm writer as an
  // opaque "Dyn casting error": it is kept here and reported instead, with its file, line and field.
  let sourceError: unknown;
  const batches = new ReadableStream<wasm.RecordBatch>({
    async pull(controller) {
      if (done) return controller.close();
      const b = new BatchBuilder(schema);
      try {
        while (b.length < batchRows) {
          const n = await it.next();
          if (n.done) {
            done = true;
            break;
          }
          try {
            b.push(n.value);
          } catch (e) {
            // a record that does not fit the layout: which one (its field is in the message)
            throw new RecordFitError((e as Error).message, (n.value as Located)[SOURCE_LINE], count + b.length + 1);
          }
        }
      } catch (e) {
        sourceError = e;
        throw e;
      }
      // An empty file still needs one (empty) batch so the schema is written.
      if (b.length === 0 && count > 0) return controller.close();
      count += b.length;
      const ipc = RecordBatchStreamWriter.writeAll([b.finish()]).toUint8Array(true);
      for (const rb of wasm.Table.fromIPCStream(ipc).recordBatches()) controller.enqueue(rb);
      if (done) controller.close();
    },
  });
  makeFolders(dirname(path));
  const tmp = besideFile(path);
  const untrack = removeOnStop(tmp);
  try {
    const out = await wasm.transformParquetStream(batches, writerProperties(opts));
    await pipeline(Readable.fromWeb(out as never), openWriteStream(tmp));
    // the wasm writer ends its output as complete when a batch after the first fails: the file holds
    // only the records before the failure, so it must not take the output's place
    if (sourceError !== undefined) throw sourceError;
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw sourceError ?? notWritten(e, path, tmp);
  } finally {
    untrack();
  }
  return { records: count };
}
