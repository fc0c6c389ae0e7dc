/**
 * Streams JSONL records into a Parquet file in the engine's layout (telemetry.md §3): each record's
 * fields go straight into leaf columns (parquet-file.ts), cut into pages per batch and row groups
 * like parquet-rs (1,048,576 rows), SNAPPY, and the engine's Arrow schema embedded as
 * `ARROW:schema` so Arrow readers see the same types (dictionary strings, LargeUtf8, UInt64,
 * Timestamp(ns), the JSON extension on json_payload). Memory stays bounded by one row group.
 */
import { open, mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  Bool, Dictionary, Field, Int32, LargeUtf8, List, Schema, Struct, Table, TimestampNanosecond, Uint32, Uint64, Utf8, tableToIPC, type DataType,
} from 'apache-arrow';
import { eventKey } from '../telemetry/event-types.js';
import { Leaf, ParquetFileWriter, Physical, Repetition, type Logical, type SchemaNode } from './parquet-file.js';
import { ATTRIBUTE_COLUMNS, JSON_EXTENSION_METADATA, TOP_COLUMNS, splitInto, type ColKind, type ColSpec } from './parquet-layout.js';
import type { AttrValue, JsonlRecord } from './record.js';

export interface ParquetWriteOptions {
  /** rows per data page (the engine buffers 1,024 per batch; larger pages are cheaper here) */
  batchRows?: number;
  /** rows per Parquet row group (parquet-rs default 1,048,576) */
  rowGroupRows?: number;
  /** dictionary bytes per text column chunk before the rest of it is written PLAIN (default 64 MiB) */
  dictionaryLimit?: number;
}

const DEC = /^\d{1,20}$/;

/* ---------------- the Arrow schema (embedded as ARROW:schema) ---------------- */

let dictId = 0;
function arrowType(kind: ColKind): DataType {
  switch (kind) {
    case 'dict':
      return new Dictionary(new Utf8(), new Int32(), dictId++);
    case 'lstr':
    case 'json':
      return new LargeUtf8();
    case 'u64':
      return new Uint64();
    case 'u32':
      return new Uint32();
    case 'i32':
      return new Int32();
    case 'bool':
      return new Bool();
    case 'ts':
      return new TimestampNanosecond();
  }
}

function field(c: ColSpec): Field {
  return new Field(c.name, arrowType(c.kind), c.nullable, c.kind === 'json' ? new Map(JSON_EXTENSION_METADATA) : undefined);
}

const LINK_COLUMNS: ColSpec[] = [
  { name: 'trace_id', kind: 'dict', nullable: false },
  { name: 'span_id', kind: 'u64', nullable: false },
  { name: 'json_payload', kind: 'json', nullable: true },
];

/** The full Arrow schema of the engine's Parquet file. */
export function engineSchema(): Schema {
  const fields: Field[] = [];
  for (const c of TOP_COLUMNS) {
    fields.push(field(c));
    if (c.name === 'parent_span_id') fields.push(new Field('links', new List(new Field('item', new Struct(LINK_COLUMNS.map(field)), true)), true));
  }
  fields.push(new Field('attributes', new Struct(ATTRIBUTE_COLUMNS.map(field)), false));
  return new Schema(fields);
}

/** `ARROW:schema` as arrow-rs writes it: base64 of the IPC-encapsulated schema message. */
let arrowSchemaB64: string | undefined;
function arrowSchemaMetadata(): string {
  if (arrowSchemaB64 === undefined) {
    const ipc = tableToIPC(new Table(engineSchema()), 'stream');
    // the stream is the schema message followed by the 8-byte end-of-stream marker
    arrowSchemaB64 = Buffer.from(ipc.subarray(0, ipc.length - 8)).toString('base64');
  }
  return arrowSchemaB64;
}

/* ---------------- the Parquet schema and its leaves ---------------- */

function parquetLeaf(c: ColSpec, path: string[], maxDef: number, maxRep: number, dictLimit?: number): { node: SchemaNode; leaf: Leaf } {
  let physical: Physical;
  let logical: Logical | undefined;
  switch (c.kind) {
    case 'dict':
    case 'lstr':
    case 'json':
      physical = Physical.BYTE_ARRAY;
      logical = { kind: 'string' };
      break;
    case 'u64':
      physical = Physical.INT64;
      logical = { kind: 'uint', bits: 64 };
      break;
    case 'ts':
      physical = Physical.INT64;
      logical = { kind: 'timestamp_ns' };
      break;
    case 'u32':
      physical = Physical.INT32;
      logical = { kind: 'uint', bits: 32 };
      break;
    case 'i32':
      physical = Physical.INT32;
      break;
    case 'bool':
      physical = Physical.BOOLEAN;
      break;
  }
  const node: SchemaNode = { name: c.name, repetition: c.nullable ? Repetition.OPTIONAL : Repetition.REQUIRED, physical, logical };
  // Every text column is dictionary-encoded but the always-unique event ids: hashing a string costs far
  // less than compressing it, and span names, SQL, paths and checksums repeat (SpanStart and SpanEnd).
  const dictionary = physical === Physical.BYTE_ARRAY && c.name !== 'event_id';
  return { node, leaf: new Leaf(path, physical, maxDef, maxRep, dictionary, dictLimit) };
}

class Layout {
  readonly schema: SchemaNode[] = [];
  readonly leaves: Leaf[] = [];
  readonly top: Record<string, Leaf> = {};
  readonly links: Leaf[] = [];
  readonly attrs: Leaf[] = [];
  readonly attrKinds: ColKind[] = ATTRIBUTE_COLUMNS.map((c) => c.kind);
  readonly attrIndex = new Map(ATTRIBUTE_COLUMNS.map((c, i) => [c.name, i]));

  constructor(dictLimit?: number) {
    for (const c of TOP_COLUMNS) {
      const { node, leaf } = parquetLeaf(c, [c.name], c.nullable ? 1 : 0, 0, dictLimit);
      this.schema.push(node);
      this.leaves.push(leaf);
      this.top[c.name] = leaf;
      if (c.name === 'parent_span_id') {
        // links: optional LIST of optional struct items (max definition 3, +1 for a nullable field)
        const kids = LINK_COLUMNS.map((lc) => parquetLeaf(lc, ['links', 'list', 'item', lc.name], lc.nullable ? 4 : 3, 1, dictLimit));
        this.schema.push({
          name: 'links', repetition: Repetition.OPTIONAL, logical: { kind: 'list' },
          children: [{ name: 'list', repetition: Repetition.REPEATED, children: [{ name: 'item', repetition: Repetition.OPTIONAL, children: kids.map((k) => k.node) }] }],
        });
        for (const k of kids) {
          this.leaves.push(k.leaf);
          this.links.push(k.leaf);
        }
      }
    }
    const kids = ATTRIBUTE_COLUMNS.map((c) => parquetLeaf(c, ['attributes', c.name], 1, 0, dictLimit));
    this.schema.push({ name: 'attributes', repetition: Repetition.REQUIRED, children: kids.map((k) => k.node) });
    for (const k of kids) {
      this.leaves.push(k.leaf);
      this.attrs.push(k.leaf);
    }
  }
}

/* ---------------- values ---------------- */

/** The two 32-bit words of a 16-hex id, checking it on the way (no regex, no substrings). */
function pushHex(leaf: Leaf, hex: string, field: string): void {
  let hi = 0;
  let lo = 0;
  if (hex.length === 16) {
    for (let i = 0; i < 16; i++) {
      const c = hex.charCodeAt(i);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (d < 0) return badHex(hex, field);
      if (i < 8) hi = hi * 16 + d;
      else lo = lo * 16 + d;
    }
    return leaf.i64(lo, hi);
  }
  badHex(hex, field);
}

function badHex(hex: string, field: string): never {
  throw new Error(`${field}: not 16 lower-case hex digits: ${JSON.stringify(hex)}`);
}

const P32 = 4294967296;
const P16 = 65536;

/**
 * The two 32-bit words of a decimal u64 string, exactly, in doubles: value = hi·10⁹ + lo with
 * hi < 2^35 split so that no intermediate product passes 2^53 (BigInt parsing costs several times more).
 */
function pushDecimal(leaf: Leaf, s: unknown, field: string): void {
  if (typeof s !== 'string' || !DEC.test(s)) throw new Error(`${field}: not a decimal string: ${JSON.stringify(s)}`);
  if (s.length <= 15) {
    const n = Number(s);
    return leaf.i64(n % P32, Math.floor(n / P32));
  }
  const cut = s.length - 9;
  const hi = Number(s.slice(0, cut));
  const lo = Number(s.slice(cut));
  const a = Math.floor(hi / P16) * 1e9; // < 2^49
  const c = (a % P16) * P16 + (hi % P16) * 1e9 + lo; // < 2^47
  const hiWord = Math.floor(a / P16) + Math.floor(c / P32);
  if (hiWord >= P32) throw new Error(`${field}: beyond 64 bits: ${s}`);
  leaf.i64(c % P32, hiWord);
}

const eventKeys = new Map<string, string | null>();
/** eventKey() per distinct event_type (a regex per row is measurable). */
function eventKeyCached(t: string): string | null {
  let k = eventKeys.get(t);
  if (k === undefined) eventKeys.set(t, (k = eventKey(t)));
  return k;
}

/** Row-by-row feeding of the layout's leaves; `row` counts rows of the current page. */
class Rows {
  row = 0;
  private readonly t: Record<string, Leaf>;
  constructor(private readonly l: Layout) {
    this.t = l.top;
  }

  push(r: JsonlRecord): void {
    const t = this.t;
    const row = this.row;
    t.record_type!.str(r.record_type);
    t.trace_id!.str(r.trace_id);
    if (r.span_id !== null && r.span_id !== undefined) {
      t.span_id!.at(row);
      pushHex(t.span_id!, r.span_id, 'span_id');
    }
    if (r.record_type === 'LogRecord' && r.event_id !== null && r.event_id !== undefined) {
      t.event_id!.at(row);
      t.event_id!.str(r.event_id);
    }
    if (r.span_name !== null && r.span_name !== undefined) {
      t.span_name!.at(row);
      t.span_name!.str(r.span_name);
    }
    const [lt, ls, lp] = this.l.links as [Leaf, Leaf, Leaf];
    if (r.record_type === 'LogRecord') {
      lt.slot(0, 0);
      ls.slot(0, 0);
      lp.slot(0, 0);
      t.time_unix_nano!.at(row);
      pushDecimal(t.time_unix_nano!, r.time_unix_nano, 'time_unix_nano');
    } else {
      if (r.parent_span_id !== null && r.parent_span_id !== undefined) {
        t.parent_span_id!.at(row);
        pushHex(t.parent_span_id!, r.parent_span_id, 'parent_span_id');
      }
      const links = r.links;
      if (!links) {
        lt.slot(0, 0);
        ls.slot(0, 0);
        lp.slot(0, 0);
      } else if (links.length === 0) {
        lt.slot(0, 1);
        ls.slot(0, 1);
        lp.slot(0, 1);
      } else {
        for (let k = 0; k < links.length; k++) {
          const link = links[k]!;
          const rep = k === 0 ? 0 : 1;
          lt.slot(rep, 3);
          lt.str(link.trace_id);
          ls.slot(rep, 3);
          pushHex(ls, link.span_id, 'links.span_id');
          lp.slot(rep, 4);
          lp.str(JSON.stringify(link.attributes ?? {}));
        }
      }
      t.start_time_unix_nano!.at(row);
      pushDecimal(t.start_time_unix_nano!, r.start_time_unix_nano, 'start_time_unix_nano');
      if (r.record_type === 'SpanEnd') {
        t.end_time_unix_nano!.at(row);
        pushDecimal(t.end_time_unix_nano!, r.end_time_unix_nano, 'end_time_unix_nano');
        const st = r.status;
        if (st) {
          t.status_code!.at(row);
          t.status_code!.i32(st.code);
          if (st.message !== null && st.message !== undefined) {
            t.status_message!.at(row);
            t.status_message!.str(st.message);
          }
        }
      }
    }
    t.severity_number!.i32(r.severity_number);
    t.severity_text!.str(r.severity_text);
    if (r.record_type === 'LogRecord' && r.body !== null && r.body !== undefined) {
      t.body!.at(row);
      t.body!.str(r.body);
    }
    t.event_type!.str(r.event_type);

    const payload = splitInto(eventKeyCached(r.event_type), r.attributes ?? {}, this.attr);
    if (payload !== null) {
      const p = this.l.attrs[0]!;
      p.at(row);
      p.str(payload);
    }
    this.row++;
  }

  private readonly attr = (col: string, v: AttrValue): void => {
    const i = this.l.attrIndex.get(col)!;
    const leaf = this.l.attrs[i]!;
    leaf.at(this.row);
    switch (this.l.attrKinds[i]) {
      case 'u64':
        // splitAttributes only gives canonical decimal strings here
        return pushDecimal(leaf, v, `attributes.${col}`);
      case 'u32':
      case 'i32':
        return leaf.i32(v as number);
      case 'bool':
        return leaf.bool(v as boolean);
      default:
        return leaf.str(v as string);
    }
  };
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
  const groupRows = opts.rowGroupRows ?? 1_048_576;
  const pageRows = Math.min(opts.batchRows ?? 65_536, groupRows);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  let count = 0;
  try {
    const layout = new Layout(opts.dictionaryLimit);
    const file = new ParquetFileWriter(layout.schema, layout.leaves, [['ARROW:schema', arrowSchemaMetadata()]], async (parts) => {
      await fh.writev(parts);
    }, 'runlens');
    await file.start();
    const rows = new Rows(layout);
    let inGroup = 0;
    const endPage = async () => {
      for (const leaf of layout.leaves) leaf.page(rows.row);
      inGroup += rows.row;
      rows.row = 0;
      if (inGroup >= groupRows) {
        await file.rowGroup(inGroup);
        inGroup = 0;
      }
    };
    // a page ends at pageRows or where the row group is full
    const take = async (r: JsonlRecord) => {
      rows.push(r);
      count++;
      if (rows.row === pageRows || inGroup + rows.row === groupRows) await endPage();
    };
    if (Array.isArray(records)) {
      for (const r of records) {
        rows.push(r);
        count++;
        if (rows.row === pageRows || inGroup + rows.row === groupRows) await endPage();
      }
    } else for await (const r of records as AsyncIterable<JsonlRecord>) await take(r);
    if (rows.row > 0) await endPage();
    if (inGroup > 0) await file.rowGroup(inGroup);
    await file.finish();
    await fh.close();
    await rename(tmp, path);
  } catch (e) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
  return { records: count };
}
