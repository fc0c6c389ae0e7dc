/**
 * A live source (the OTLP receiver): one `files` row for the whole session, then batches of records
 * in the raw envelope shape handed over as columns. DuckDB's appender copies them into a staging
 * table and the one normalizer (normalizeSelect) moves them into record_rows, as for any file:
 * serializing batches as JSONL for read_json would cost more than the rest of the ingest.
 *
 * Each string crosses into DuckDB by its own native call, so few do: span ids travel
 * as the unsigned integers of their 8 bytes (as in Parquet), and strings that repeat (record type,
 * trace id, event type, severity) as codes of a dictionary kept for the session.
 */
import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { duckdb } from './duckdb.js';

const { BIGINT, DuckDBDataChunk, INTEGER, UBIGINT, VARCHAR } = duckdb;
import { endianness } from 'node:os';
import type { Db } from './db.js';
import { hideLiveRepeatsSql, takeLiveWorseSql } from './dedupe.js';
import { deriveTouched } from './derive.js';
import { normalizeSelect } from './normalize-sql.js';

/** A record in the raw envelope shape (jsonl.ts reads the same fields from a line). */
export interface LiveRow {
  /** SpanStart: a span received without an end (it has not ended) */
  record_type: 'SpanStart' | 'SpanEnd' | 'LogRecord';
  trace_id: string;
  /** the id's 8 bytes as an unsigned integer */
  span_id: bigint | null;
  parent_span_id: bigint | null;
  span_name: string | null;
  event_type: string;
  event_id: string | null;
  start_ns: bigint | null;
  end_ns: bigint | null;
  time_ns: bigint | null;
  severity_number: number;
  severity_text: string;
  status_code: number | null;
  status_message: string | null;
  body: string | null;
  /** JSON text */
  links: string | null;
  /** JSON text */
  attributes: string;
}

type Name = keyof LiveRow;
/** columns in readJsonSql's order; `dict`: sent as a code of the session's dictionary */
const COLUMNS: [Name, DuckDBType, 'dict' | 'id' | 'json' | ''][] = [
  ['record_type', INTEGER, 'dict'], ['trace_id', INTEGER, 'dict'], ['span_id', UBIGINT, 'id'], ['parent_span_id', UBIGINT, 'id'],
  ['span_name', VARCHAR, ''], ['event_type', INTEGER, 'dict'], ['event_id', VARCHAR, ''], ['start_ns', BIGINT, ''],
  ['end_ns', BIGINT, ''], ['time_ns', BIGINT, ''], ['severity_number', INTEGER, ''], ['severity_text', INTEGER, 'dict'],
  ['status_code', INTEGER, ''], ['status_message', VARCHAR, ''], ['body', VARCHAR, ''], ['links', VARCHAR, 'json'],
  ['attributes', VARCHAR, 'json'],
];
const LITTLE_ENDIAN = endianness() === 'LE';
/** DuckDB's vector size: the most rows one data chunk holds. */
const CHUNK = 2048;

const BIG = ['span_id', 'parent_span_id', 'start_ns', 'end_ns', 'time_ns'] as const;
const NUM = ['severity_number', 'status_code'] as const;
type StrName = Exclude<Name, (typeof BIG)[number] | (typeof NUM)[number]>;
const STR = COLUMNS.map(([n]) => n).filter((n) => !(BIG as readonly string[]).includes(n) && !(NUM as readonly string[]).includes(n)) as StrName[];

/**
 * Records gathered for one append (the rows of one or more requests), as columns: rows wait for
 * DuckDB for a while, and as objects (with a BigInt per time and id) they would be copied by every
 * young-generation GC until promoted. Numbers live in
 * typed arrays (0 and NaN stand for null: a time or id of 0 means "none" in OTLP).
 */
export class LiveRows {
  private n = 0;
  private big = {} as Record<(typeof BIG)[number], BigUint64Array>;
  private num = {} as Record<(typeof NUM)[number], Float64Array>;
  private str = {} as Record<StrName, (string | null)[]>;

  /** the 64-bit columns as 32-bit words and bytes: ids and times are written without a BigInt each */
  private words = {} as Record<(typeof BIG)[number], Uint32Array>;
  private bytes = {} as Record<(typeof BIG)[number], Uint8Array>;
  /** 1 where a log record's event_id is the one it was sent with (not one made for it): part of its identity */
  private eventIdSent: Uint8Array;

  constructor(capacity = 512) {
    for (const c of BIG) this.setBig(c, new BigUint64Array(capacity));
    for (const c of NUM) this.num[c] = new Float64Array(capacity);
    for (const c of STR) this.str[c] = [];
    this.eventIdSent = new Uint8Array(capacity);
  }

  private setBig(c: (typeof BIG)[number], a: BigUint64Array): void {
    this.big[c] = a;
    this.words[c] = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
    this.bytes[c] = new Uint8Array(a.buffer, a.byteOffset, a.length * 8);
  }

  get length(): number {
    return this.n;
  }

  private reserve(extra: number): void {
    const cap = this.big.span_id.length;
    if (this.n + extra <= cap) return;
    const size = Math.max(this.n + extra, cap * 2);
    for (const c of BIG) {
      const a = new BigUint64Array(size);
      a.set(this.big[c].subarray(0, this.n));
      this.setBig(c, a);
    }
    for (const c of NUM) {
      const a = new Float64Array(size);
      a.set(this.num[c].subarray(0, this.n));
      this.num[c] = a;
    }
    const sent = new Uint8Array(size);
    sent.set(this.eventIdSent.subarray(0, this.n));
    this.eventIdSent = sent;
  }

  /**
   * A new row, every column null, to be filled in by the setters below (the OTLP converter writes
   * decoded fields straight into the columns). Returns its index.
   */
  addRow(): number {
    this.reserve(1);
    const i = this.n++;
    this.num.status_code[i] = NaN;
    this.eventIdSent[i] = 0;
    const { str } = this;
    str.record_type.push(null);
    str.trace_id.push(null);
    str.span_name.push(null);
    str.event_type.push(null);
    str.event_id.push(null);
    str.severity_text.push(null);
    str.status_message.push(null);
    str.body.push(null);
    str.links.push(null);
    str.attributes.push(null);
    return i;
  }

  /** An id's 8 bytes (big-endian, as on the wire) as its unsigned integer. */
  setIdBytes(c: 'span_id' | 'parent_span_id', i: number, b: Uint8Array): void {
    const to = this.bytes[c];
    const at = i * 8;
    if (LITTLE_ENDIAN) for (let k = 0; k < 8; k++) to[at + k] = b[7 - k]!;
    else for (let k = 0; k < 8; k++) to[at + k] = b[k]!;
  }

  /** A 64-bit unsigned value from its 32-bit halves (a protobufjs Long). */
  setWords(c: (typeof BIG)[number], i: number, low: number, high: number): void {
    const w = this.words[c];
    w[i * 2] = LITTLE_ENDIAN ? low : high;
    w[i * 2 + 1] = LITTLE_ENDIAN ? high : low;
  }

  setBigValue(c: (typeof BIG)[number], i: number, v: bigint | null): void {
    this.big[c][i] = v ?? 0n;
  }

  setNum(c: (typeof NUM)[number], i: number, v: number | null): void {
    this.num[c][i] = v ?? NaN;
  }

  setStr(c: StrName, i: number, v: string | null): void {
    this.str[c][i] = v;
  }

  /** A log record's event id; `sent`: the client sent it (one made here differs on every copy). */
  setEventId(i: number, id: string, sent: boolean): void {
    this.str.event_id[i] = id;
    this.eventIdSent[i] = sent ? 1 : 0;
  }

  append(o: LiveRows): void {
    this.reserve(o.n);
    for (const c of BIG) this.big[c].set(o.big[c].subarray(0, o.n), this.n);
    for (const c of NUM) this.num[c].set(o.num[c].subarray(0, o.n), this.n);
    this.eventIdSent.set(o.eventIdSent.subarray(0, o.n), this.n);
    for (const c of STR) {
      const to = this.str[c];
      for (const v of o.str[c]) to.push(v);
    }
    this.n += o.n;
  }

  /** The rows at `indexes`, in that order, as a batch of their own. */
  pick(indexes: number[]): LiveRows {
    const out = new LiveRows(Math.max(1, indexes.length));
    for (const i of indexes) {
      const j = out.addRow();
      for (const c of BIG) out.big[c][j] = this.big[c][i]!;
      for (const c of NUM) out.num[c][j] = this.num[c][i]!;
      for (const c of STR) out.str[c][j] = this.str[c][i]!;
      out.eventIdSent[j] = this.eventIdSent[i]!;
    }
    return out;
  }

  /**
   * Row i's identity as the model's (src/store/dedupe.ts): trace, span and record type, and for a log
   * record also its time, event type and body, and the event id it was sent with (two logs alike but
   * for their event ids are two events).
   */
  identity(i: number): string {
    const { str, words } = this;
    const span = `${words.span_id[i * 2]}.${words.span_id[i * 2 + 1]}`;
    if (str.record_type[i] !== 'LogRecord') return `${str.record_type[i]} ${str.trace_id[i]} ${span}`;
    const eventId = this.eventIdSent[i] ? str.event_id[i] : '';
    return `LogRecord ${str.trace_id[i]} ${span} ${this.big.time_ns[i]} ${str.event_type[i]} ${eventId} ${str.body[i]}`;
  }

  /** one column's values [at, at + n) as DuckDB values */
  values(name: Name, at: number, n: number): (string | number | bigint | null)[] {
    const out = new Array<string | number | bigint | null>(n);
    if ((BIG as readonly string[]).includes(name)) {
      const a = this.big[name as (typeof BIG)[number]];
      for (let j = 0; j < n; j++) {
        const v = a[at + j]!;
        out[j] = v === 0n ? null : v;
      }
    } else if ((NUM as readonly string[]).includes(name)) {
      const a = this.num[name as (typeof NUM)[number]];
      for (let j = 0; j < n; j++) {
        const v = a[at + j]!;
        out[j] = Number.isNaN(v) ? null : v;
      }
    } else {
      const a = this.str[name as StrName];
      for (let j = 0; j < n; j++) out[j] = a[at + j]!;
    }
    return out;
  }

  /** Row i as values (outputs rebuild records from it, row by row: no array per column). */
  row(i: number): LiveRow {
    const o: Record<string, string | number | bigint | null> = {};
    for (const c of BIG) {
      const v = this.big[c][i]!;
      o[c] = v === 0n ? null : v;
    }
    for (const c of NUM) {
      const v = this.num[c][i]!;
      o[c] = Number.isNaN(v) ? null : v;
    }
    for (const c of STR) o[c] = this.str[c][i]!;
    return o as unknown as LiveRow;
  }
}

/** A hex span id from its integer form (outputs write hex). */
export function hexSpanId(v: bigint | null): string | null {
  return v === null ? null : v.toString(16).padStart(16, '0');
}

export interface LiveSource {
  fileId: number;
  dict: Map<string, number>;
  /** traces other inputs held when the source opened: a batch of one of them may repeat their records */
  earlier: Set<string>;
}

export async function openLiveSource(db: Db, label: string): Promise<LiveSource> {
  // DuckDB checkpoints (and compresses, in memory too) whenever 16 MB were written since the last:
  // with batches arriving all the time that means frequent long stalls. Checkpoint far less often;
  // closing the database still checkpoints.
  await db.run("SET checkpoint_threshold = '1GB'");
  await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
  // JSON columns take the appender's VARCHAR as it is: the text is ours (JSON.stringify), valid by
  // construction, and a cast at insert would parse every attributes object once more.
  await db.run(`CREATE OR REPLACE TEMP TABLE _live_rows (${COLUMNS.map(([n, t, how]) => `${n} ${how === 'json' ? 'JSON' : t.toString()}`).join(', ')})`);
  await db.run('CREATE OR REPLACE TEMP TABLE _live_dict (code INTEGER, value VARCHAR)');
  const fileId = (await db.scalar<number>('SELECT (coalesce(max(file_id), 0) + 1)::INTEGER FROM files')) ?? 1;
  await db.run(
    `INSERT INTO files (file_id, path, sha256, size, format, records, first_row) VALUES ($id, $path, $sha, 0, 'otlp', 0, 0)`,
    { id: fileId, path: label, sha: `live:${label}:${Date.now()}:${fileId}` },
  );
  // (the source has no rows yet; a database file is written by one process at a time)
  const earlier = new Set((await db.all<{ t: string }>('SELECT DISTINCT trace_id AS t FROM record_rows WHERE record_type IS NOT NULL AND trace_id IS NOT NULL')).map((r) => r.t));
  return { fileId, dict: new Map(), earlier };
}

/** The staging rows decoded back into the envelope columns, in readJsonSql's order. */
const staged = (fileId: number) => `SELECT CAST(${Math.trunc(fileId)} AS INTEGER) AS file_id, ${COLUMNS.map(([n, , how]) =>
  how === 'dict' ? `d_${n}.value AS ${n}` : how === 'id' ? `printf('%016x', r.${n}) AS ${n}` : `r.${n}`,
).join(', ')}
FROM _live_rows r ${COLUMNS.filter(([, , how]) => how === 'dict').map(([n]) => `LEFT JOIN _live_dict d_${n} ON d_${n}.code = r.${n}`).join(' ')}`;

/** Append rows to a live source and mark their traces for the next derive. */
export async function appendLiveRows(db: Db, src: LiveSource, batch: LiveRows): Promise<void> {
  const rows = batch;
  if (rows.length === 0) return;
  // A dictionary grows with the traces of the session; start over rather than let it grow without end.
  if (src.dict.size > 100_000) {
    src.dict.clear();
    await db.run('DELETE FROM _live_dict');
  }
  const fresh: [number, string][] = [];
  const code = (s: string): number => {
    let c = src.dict.get(s);
    if (c === undefined) {
      c = src.dict.size;
      src.dict.set(s, c);
      fresh.push([c, s]);
    }
    return c;
  };
  const repeated = src.earlier.size ? [...new Set(rows.values('trace_id', 0, rows.length) as (string | null)[])].filter((t): t is string => t !== null && src.earlier.has(t)) : [];
  const T = [performance.now()];
  try {
    const appender = await db.conn.createAppender('_live_rows', 'main', 'temp');
    try {
      for (let at = 0; at < rows.length; at += CHUNK) {
        const n = Math.min(CHUNK, rows.length - at);
        const chunk = DuckDBDataChunk.create(COLUMNS.map(([, t]) => t), n);
        COLUMNS.forEach(([name, , how], i) => {
          const values = rows.values(name, at, n);
          if (how === 'dict') for (let j = 0; j < n; j++) values[j] = code(values[j] as string);
          chunk.setColumnValues(i, values as DuckDBValue[]);
        });
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    if (fresh.length) {
      const dictAppender = await db.conn.createAppender('_live_dict', 'main', 'temp');
      try {
        for (const [c, s] of fresh) {
          dictAppender.appendInteger(c);
          dictAppender.appendVarchar(s);
          dictAppender.endRow();
        }
        dictAppender.flushSync();
      } finally {
        dictAppender.closeSync();
      }
    }
    T.push(performance.now());
    // One call (see Db.script): the file id is inlined, as a parameter would add round trips.
    await db.script(
      [
        ['live: insert', `INSERT INTO record_rows ${normalizeSelect(staged(src.fileId))}`],
        // a record the model already holds is not added again, and an ERROR of its copy wins, as in a load (src/store/dedupe.ts)
        ...(repeated.length
          ? ([['live: worse copies', takeLiveWorseSql(src.fileId, repeated)], ['live: repeats', hideLiveRepeatsSql(src.fileId, repeated)]] as const)
          : []),
        ['live: touched', 'INSERT INTO _touched SELECT DISTINCT d.value FROM (SELECT DISTINCT trace_id FROM _live_rows) r JOIN _live_dict d ON d.code = r.trace_id'],
        // committed with the rows: a receiver killed before its next derive leaves them to the model's next opening
        ['live: pending', `INSERT INTO load_pending SELECT ${Math.trunc(src.fileId)} WHERE NOT EXISTS (SELECT 1 FROM load_pending)`],
        ['live: clear', 'DELETE FROM _live_rows'],
      ],
      { transaction: true },
    );
    T.push(performance.now());
  } catch (e) {
    // This batch is lost (its transaction was rolled back); the dictionary may no longer match its table: start it over.
    src.dict.clear();
    await db.run('DELETE FROM _live_dict').catch(() => undefined);
    await db.run('DELETE FROM _live_rows').catch(() => undefined);
    throw e;
  }
  if (process.env.RUNLENS_TIMING) {
    const [append, write] = T.slice(1).map((t, i) => (t - T[i]!).toFixed(0));
    process.stderr.write(`live: ${rows.length} rows: append ${append} ms, insert to clear ${write} ms\n`);
  }
}

/** Record count of a live source, set when it closes (a count per batch would grow with the data). */
export async function closeLiveSource(db: Db, src: LiveSource): Promise<void> {
  await db.run(`UPDATE files SET records = (SELECT count(*) FROM record_rows WHERE file_id = $id AND record_type IS NOT NULL) WHERE file_id = $id`, { id: src.fileId });
}

/** Rebuild the derived relations of every trace touched since the last call; returns how many. */
export async function deriveTouchedNow(db: Db): Promise<number> {
  await db.run('CREATE TEMP TABLE IF NOT EXISTS _touched (trace_id VARCHAR)');
  const n = await db.scalar<number>('SELECT count(DISTINCT trace_id)::INTEGER FROM _touched');
  if (n > 0) {
    await deriveTouched(db, { oneCall: true });
    await db.run('DELETE FROM _touched');
    await db.run('DELETE FROM load_pending');
  }
  return n;
}
