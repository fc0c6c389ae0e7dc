/**
 * OTLP/HTTP receiver: POST /v1/traces and /v1/logs, binary protobuf or JSON, optionally gzipped.
 * Requests are decoded by protobufjs over the OTLP .proto schema (or read as OTLP/JSON), converted to
 * the engine's records and then to columns (otlp-records.ts), and queued; a single flusher appends each batch to DuckDB, where the same normalizer as for any input
 * file makes the model's rows, and rebuilds the derived relations of the traces it touched when the
 * stream pauses or on a timer (a rebuild covers whole traces, so it must not follow every batch).
 * Responses follow the OTLP/HTTP specification.
 */
import { isUtf8 } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import protobuf from 'protobufjs';
import { RunlensError } from '../errors.js';
import { otlpRoot, type OtlpLogsRequest, type OtlpTraceRequest } from '../otlp/decode.js';
import { verifyWire } from '../otlp/verify.js';
import { randomIds } from '../produce/ids.js';
import type { JsonlRecord, LogRecordRecord, SpanEndRecord, SpanStartRecord } from '../produce/record.js';
import type { TelemetrySink } from '../produce/sinks/types.js';
import type { Db } from '../store/db.js';
import { appendLiveRows, closeLiveSource, deriveTouchedNow, LiveRows, openLiveSource, type LiveSource } from '../store/live.js';
import { keysTwiceByRecord, logsToRows, rowsToRecords, spansToRows, type ConvertedRows } from './otlp-records.js';
import { ResentRecords } from './resent-records.js';

export interface ReceiverOptions {
  db: Db;
  host?: string;
  port?: number;
  /** largest request body accepted, compressed or not (bytes); larger: 413 */
  maxBodyBytes?: number;
  /** records waiting for DuckDB beyond which requests get 429 + Retry-After */
  maxQueuedRecords?: number;
  /** flush to DuckDB at least this often (ms) and whenever this many records wait */
  flushIntervalMs?: number;
  flushRecords?: number;
  /**
   * rebuild derived relations (spans, nodes, runs) once nothing arrived for `deriveIdleMs`, and while
   * a stream goes on at most every `deriveIntervalMs` (longer when rebuilds take long)
   */
  deriveIntervalMs?: number;
  deriveIdleMs?: number;
  /**
   * DuckDB threads while receiving; default one fewer than the cores (at least 1): the event loop
   * decoding requests needs a core, and a DuckDB thread competing with it spends CPU on inserts and
   * rebuilds without making them faster.
   */
  dbThreads?: number;
  /** extra outputs written as records arrive (JSONL) or at close (Parquet) */
  sinks?: TelemetrySink[];
  /** called after each accepted request (for --until-idle) */
  onReceive?: (counts: { spans: number; logs: number }) => void;
  /** called after the derived relations were rebuilt (live views refresh) */
  onDerived?: (traces: number) => void;
  log?: (line: string) => void;
}

export interface ReceiverStats {
  requests: number;
  spans: number;
  logs: number;
  rejected: number;
  flushedRecords: number;
  throttled: number;
  /** acknowledged records the database refused when written alone (each such refusal is a defect of the checks) */
  lost: number;
  /** records acknowledged and not stored again: received before (a client's retry) */
  repeated: number;
  /** requests refused whole (400, 413, 415): their records were never read, and a client does not send them again */
  refused: number;
}

/** The first reason of each kind of record sent but not stored, for whoever must say so (gate --receive). */
export interface UnstoredReasons {
  rejected?: string;
  refused?: string;
  lost?: string;
  /** the model refused the write that closes the source (its record count): a full disk */
  closing?: string;
}

const EMPTY = Buffer.alloc(0);

const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Signal = 'traces' | 'logs';

export class OtlpReceiver {
  readonly stats: ReceiverStats = { requests: 0, spans: 0, logs: 0, rejected: 0, flushedRecords: 0, throttled: 0, lost: 0, repeated: 0, refused: 0 };
  readonly reasons: UnstoredReasons = {};
  private app: FastifyInstance;
  private pending: LiveRows[] = [];
  private pendingCount = 0;
  /** records in the model whose traces were not derived since */
  private underived = 0;
  private flushing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private lastDerive = 0;
  private lastDeriveMs = 0;
  private lastReceive = 0;
  private source?: LiveSource;
  private threadsBefore?: number;
  private closed = false;
  private ids = randomIds();
  private resent = new ResentRecords();
  private readonly o: Required<Omit<ReceiverOptions, 'sinks' | 'onReceive' | 'onDerived' | 'log'>> &
    Pick<ReceiverOptions, 'sinks' | 'onReceive' | 'onDerived' | 'log'>;
  /** the first failure of a sink, reported once; the other outputs go on */
  readonly sinkErrors = new Map<string, Error>();
  /** names of spans received, for the log records that come after them (outputs only) */
  private readonly spanNames = new SpanNames();

  constructor(opts: ReceiverOptions) {
    this.o = {
      host: '127.0.0.1',
      port: 4318,
      maxBodyBytes: 16 * 1024 * 1024,
      maxQueuedRecords: 200_000,
      flushIntervalMs: 250,
      flushRecords: 20_000,
      deriveIntervalMs: 1_000,
      deriveIdleMs: 300,
      dbThreads: Math.max(1, availableParallelism() - 1),
      ...opts,
    };
    this.app = Fastify({ bodyLimit: this.o.maxBodyBytes, logger: false });
    const raw = (_req: FastifyRequest, body: Buffer, done: (e: Error | null, b?: Buffer) => void) => done(null, body);
    // Only the OTLP encodings: anything else (text/plain included) is 415.
    this.app.removeAllContentTypeParsers();
    this.app.addContentTypeParser('application/x-protobuf', { parseAs: 'buffer' }, raw);
    this.app.addContentTypeParser('application/protobuf', { parseAs: 'buffer' }, raw);
    this.app.addContentTypeParser('application/json', { parseAs: 'buffer' }, raw);
    this.app.post('/v1/traces', (req, reply) => this.handle('traces', req, reply));
    this.app.post('/v1/logs', (req, reply) => this.handle('logs', req, reply));
    this.app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
      const status = err.statusCode === 413 || err.statusCode === 415 ? err.statusCode : (err.statusCode ?? 500) < 500 ? 400 : 500;
      this.sendStatus(req, reply, status, status === 413 ? this.tooLarge('request body') : err.message);
    });
  }

  /** the port listened on (--port 0 picks one), kept after close for what names the source */
  private boundPort: number | undefined;

  get address(): { host: string; port: number } {
    return { host: this.o.host, port: this.boundPort ?? this.o.port };
  }

  get url(): string {
    return `http://${this.address.host}:${this.address.port}`;
  }

  async start(): Promise<void> {
    try {
      await this.app.listen({ host: this.o.host, port: this.o.port });
    } catch (e) {
      // a port in use, an address not of this machine: the user's to change
      throw new RunlensError(`cannot listen on ${this.o.host}:${this.o.port}: ${(e as Error).message}`, 'usage');
    }
    const a = this.app.server.address();
    this.boundPort = typeof a === 'object' && a ? a.port : this.o.port;
    // Opened once listening, to name the port bound. Nothing flushes before start returns (the timer
    // starts below), so the requests that come meanwhile wait in the queue.
    try {
      this.source = await openLiveSource(this.o.db, `otlp://${this.o.host}:${this.boundPort}`);
    } catch (e) {
      await this.app.close();
      throw e;
    }
    // only once listening: a receiver that could not start leaves the database's setting alone
    this.threadsBefore = await this.o.db.scalar<number>(`SELECT current_setting('threads')::INTEGER`);
    await this.o.db.run(`SET threads = ${Math.max(1, Math.floor(this.o.dbThreads))}`);
    this.timer = setInterval(() => this.flushInBackground(), this.o.flushIntervalMs);
  }

  /** A 413's message: the limit, and the option that sets it. */
  private tooLarge(what: string): string {
    return `${what} over ${this.o.maxBodyBytes} bytes (raise --max-body-mb)`;
  }

  /** Media types compare without case and parameters (`Application/JSON; charset=utf-8`). */
  private isJson(req: FastifyRequest): boolean {
    return (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
  }

  private sendStatus(req: FastifyRequest, reply: FastifyReply, status: number, message: string): void {
    if (status === 400 || status === 413 || status === 415) {
      this.stats.refused++;
      this.reasons.refused ??= `${req.url}: ${status} ${message}`;
    }
    if (status === 429 || status === 503) reply.header('Retry-After', '1');
    if (this.isJson(req)) {
      void reply.code(status).type('application/json').send(JSON.stringify({ code: status === 400 ? 3 : status === 429 ? 8 : 13, message }));
    } else {
      const body = StatusType.encode(StatusType.create({ code: status === 400 ? 3 : status === 429 ? 8 : 13, message })).finish();
      void reply.code(status).type('application/x-protobuf').send(Buffer.from(body));
    }
  }

  private body(req: FastifyRequest): Buffer {
    let body = req.body as Buffer | undefined;
    if (!Buffer.isBuffer(body)) throw new HttpError(400, 'empty request body');
    const enc = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (enc === 'gzip') {
      try {
        // maxOutputLength stops gzip bombs: the decompressed size counts against the same limit.
        body = gunzipSync(body, { maxOutputLength: this.o.maxBodyBytes });
      } catch (e) {
        const tooBig = (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || /too large|exceeds/i.test((e as Error).message);
        throw new HttpError(tooBig ? 413 : 400, tooBig ? this.tooLarge('decompressed body') : 'invalid gzip body');
      }
    } else if (enc !== 'identity') throw new HttpError(415, `unsupported Content-Encoding ${enc} (use gzip or none)`);
    return body;
  }

  private decode(signal: Signal, json: boolean, body: Buffer): ConvertedRows {
    let req: OtlpTraceRequest | OtlpLogsRequest;
    let text: string | undefined;
    if (json) {
      // toString would replace bad bytes with U+FFFD: stored text would differ from what was sent
      if (!isUtf8(body)) throw new HttpError(400, 'invalid JSON: the body is not valid UTF-8');
      try {
        text = body.toString('utf8');
        req = JSON.parse(text) as OtlpTraceRequest | OtlpLogsRequest;
      } catch (e) {
        throw new HttpError(400, `invalid JSON: ${(e as Error).message}`);
      }
    } else {
      try {
        // protobufjs over the OTLP .proto schema, once the wire checks it does not make have passed;
        // the message itself, not toObject(): otlp-records.ts reads bytes and Longs directly.
        const T = otlpRoot().lookupType(signal === 'traces' ? 'opentelemetry.proto.trace.v1.ExportTraceServiceRequest' : 'opentelemetry.proto.logs.v1.ExportLogsServiceRequest');
        verifyWire(body, T);
        req = T.decode(body) as unknown as OtlpTraceRequest | OtlpLogsRequest;
      } catch (e) {
        throw new HttpError(400, `undecodable protobuf: ${(e as Error).message}`);
      }
    }
    // Each span or log is type-checked here, before the answer: what cannot be stored is rejected
    // (partialSuccess), a request whose structure is not OTLP throws (400).
    try {
      // a key written twice, which JSON.parse took silently: its record is rejected
      const twice = text === undefined ? undefined
        : signal === 'traces' ? keysTwiceByRecord(text, req, 'resourceSpans', 'scopeSpans', 'spans') : keysTwiceByRecord(text, req, 'resourceLogs', 'scopeLogs', 'logRecords');
      return signal === 'traces'
        ? spansToRows(req as OtlpTraceRequest, twice)
        : logsToRows(req as OtlpLogsRequest, () => this.ids.uuidv7(Date.now()), twice);
    } catch (e) {
      throw new HttpError(400, `not an OTLP ${signal} request: ${(e as Error).message}`);
    }
  }

  private async handle(signal: Signal, req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const json = this.isJson(req);
    try {
      if (this.closed) throw new HttpError(503, 'receiver is shutting down');
      if (this.pendingCount >= this.o.maxQueuedRecords) {
        this.stats.throttled++;
        throw new HttpError(429, 'ingest queue is full, retry later');
      }
      const conv = this.decode(signal, json, this.body(req));
      const { rows, repeated } = this.resent.keep(conv.rows);
      const n = rows.length;
      this.stats.requests++;
      this.stats.rejected += conv.rejected;
      if (conv.rejected) this.reasons.rejected ??= conv.errors[0];
      this.stats.repeated += repeated;
      if (signal === 'traces') this.stats.spans += n;
      else this.stats.logs += n;
      this.lastReceive = Date.now();
      if (n) {
        this.pending.push(rows);
        this.pendingCount += n;
        this.toSinks(rows);
      }
      this.o.onReceive?.({ spans: signal === 'traces' ? n : 0, logs: signal === 'logs' ? n : 0 });
      if (this.pendingCount >= this.o.flushRecords) this.flushInBackground();
      const more = conv.rejected - conv.errors.length;
      const partial = conv.rejected
        ? {
            [signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords']: String(conv.rejected),
            errorMessage: conv.errors.join('; ') + (more > 0 ? ` (and ${more} more)` : ''),
          }
        : undefined;
      if (json) {
        await reply.code(200).type('application/json').send(JSON.stringify(partial ? { partialSuccess: partial } : {}));
      } else if (!partial) {
        // an empty Export…ServiceResponse: full success
        await reply.code(200).type('application/x-protobuf').send(EMPTY);
      } else {
        const T = otlpRoot().lookupType(signal === 'traces' ? 'opentelemetry.proto.trace.v1.ExportTraceServiceResponse' : 'opentelemetry.proto.logs.v1.ExportLogsServiceResponse');
        await reply.code(200).type('application/x-protobuf').send(Buffer.from(T.encode(T.fromObject({ partialSuccess: partial })).finish()));
      }
    } catch (e) {
      if (e instanceof HttpError) return this.sendStatus(req, reply, e.status, e.message);
      throw e;
    }
  }

  /**
   * Outputs get conformant records: a SpanStart (the engine writes one at open) before each SpanEnd,
   * and a log record the name of its span when that span was received before it (an OTLP log
   * carries no span name, and a span is sent when it ends, mostly after its logs).
   * An output's failure is reported and leaves the others, and the answer to the request, alone.
   */
  private toSinks(rows: LiveRows): void {
    const sinks = (this.o.sinks ?? []).filter((s) => !this.sinkErrors.has(s.name));
    if (sinks.length === 0) return;
    let records: ReturnType<typeof rowsToRecords>;
    try {
      records = rowsToRecords(rows);
    } catch (e) {
      for (const s of sinks) this.sinkErrors.set(s.name, e as Error);
      this.o.log?.(`runlens: outputs stopped, a received record could not be written as one: ${(e as Error).message}`);
      return;
    }
    for (let r of records) {
      if (r.record_type === 'SpanEnd') this.spanNames.add(r.trace_id, r.span_id, r.span_name);
      else if (r.span_id !== null && r.span_name === null) {
        const name = this.spanNames.get(r.trace_id, r.span_id);
        if (name !== undefined) r = { ...r, span_name: name };
      }
      const out: JsonlRecord[] = r.record_type === 'SpanEnd' ? [spanStartOf(r), r] : [r];
      for (const s of sinks) {
        if (this.sinkErrors.has(s.name)) continue;
        try {
          for (const x of out) if (x.severity_number >= s.minSeverity || x.severity_number === 0) s.write(x);
        } catch (e) {
          this.sinkErrors.set(s.name, e as Error);
          this.o.log?.(`runlens: output ${s.name} failed, the others go on: ${(e as Error).message}`);
        }
      }
    }
  }

  /**
   * Write what is queued into DuckDB; one flush at a time. Derive when asked (`force`: before a
   * query or close), when the stream paused, or while it goes on at most every deriveIntervalMs and
   * ten times the last rebuild's duration: a rebuild covers whole traces, so while one long run
   * streams in, rebuilding it often would cost more than the ingest.
   */
  flush(force: boolean): Promise<void> {
    // a failed flush is reported to its caller; the next one starts afresh
    this.flushing = this.flushing.catch(() => undefined).then(async () => {
      if (this.pendingCount > 0) {
        const batches = this.pending;
        this.pending = [];
        this.pendingCount = 0;
        const t0 = performance.now();
        const written = await this.write(batches);
        this.stats.flushedRecords += written;
        this.underived += written;
        if (process.env.RUNLENS_TIMING) process.stderr.write(`receive: batch of ${written} in ${(performance.now() - t0).toFixed(0)} ms\n`);
      }
      if (this.underived === 0) return;
      const now = Date.now();
      const idle = now - this.lastReceive >= this.o.deriveIdleMs && this.pendingCount === 0;
      if (force || idle || now - this.lastDerive >= Math.max(this.o.deriveIntervalMs, 10 * this.lastDeriveMs)) {
        this.underived = 0;
        const traces = await deriveTouchedNow(this.o.db);
        this.lastDeriveMs = Date.now() - now;
        this.lastDerive = Date.now();
        if (process.env.RUNLENS_TIMING) process.stderr.write(`receive: derive in ${this.lastDeriveMs} ms\n`);
        this.o.onDerived?.(traces);
      }
    });
    return this.flushing;
  }

  /**
   * Append the queued requests in one batch. The checks while converting make a refusal a defect, yet
   * if the database refuses the batch it must not take the other requests' records with it: each
   * request is then written alone, and a request refused alone record by record, so only the records
   * refused on their own are lost (counted, reported by the flush). When nothing of the batch can be
   * written, or the database's error is not about a record (a full disk), the database itself is
   * failing: the rest of the batch is lost as a whole, not tried record by record.
   */
  private async write(batches: LiveRows[]): Promise<number> {
    const all = batches.length === 1 ? batches[0]! : batches.reduce((acc, b) => (acc.append(b), acc), new LiveRows(rowsIn(batches)));
    let first: Error;
    try {
      await appendLiveRows(this.o.db, this.source!, all);
      return all.length;
    } catch (e) {
      first = e as Error;
    }
    let written = 0;
    const refused: LiveRows[] = [];
    if (batches.length > 1) {
      for (const b of batches) {
        try {
          await appendLiveRows(this.o.db, this.source!, b);
          written += b.length;
        } catch {
          refused.push(b);
        }
      }
    } else refused.push(all);
    let lost = 0;
    let tried = 0;
    for (const b of refused) {
      for (let i = 0; i < b.length; i++) {
        // a database that took nothing, not even a handful of records alone, is failing as a whole
        if ((written === 0 && tried >= ALONE_PROBES) || !refusesRecord(first)) {
          lost += b.length - i;
          this.resent.forget(b, i);
          break;
        }
        tried++;
        const one = b.pick([i]);
        try {
          await appendLiveRows(this.o.db, this.source!, one);
          written++;
        } catch (e) {
          lost++;
          this.resent.forget(one);
          first = e as Error;
        }
      }
    }
    this.stats.lost += lost;
    if (lost) this.reasons.lost ??= first.message;
    this.underived += written;
    this.stats.flushedRecords += written;
    throw new Error(`${lost} acknowledged record${lost === 1 ? '' : 's'} could not be written: ${first.message}`);
  }

  /** A flush nobody waits for: its failure is logged, never an unhandled rejection that ends the process. */
  private flushInBackground(): void {
    this.flush(false).catch((e: unknown) => this.o.log?.(`runlens: receive: writing to the database failed: ${(e as Error).message}`));
  }

  /** Stop accepting, flush everything into DuckDB, close the outputs. */
  async close(): Promise<void> {
    if (this.closed) return this.flushing.catch(() => undefined);
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.app.close();
    // what could not be written is counted (stats.lost) and reported; the outputs still close
    await this.flush(true).catch((e: unknown) => this.o.log?.(`runlens: receive: writing to the database failed: ${(e as Error).message}`));
    if (this.source) {
      try {
        await closeLiveSource(this.o.db, this.source);
      } catch (e) {
        this.reasons.closing = (e as Error).message;
        this.o.log?.(`runlens: receive: writing to the database failed: ${(e as Error).message}`);
      }
    }
    if (this.threadsBefore) await this.o.db.run(`SET threads = ${this.threadsBefore}`);
    for (const s of this.o.sinks ?? []) {
      try {
        await s.close();
      } catch (e) {
        if (!this.sinkErrors.has(s.name)) {
          this.sinkErrors.set(s.name, e as Error);
          this.o.log?.(`runlens: output ${s.name} failed: ${(e as Error).message}`);
        }
      }
    }
  }
}

/**
 * Span names by trace and span id, the most recent SPAN_NAMES kept: a receiver runs for long, and a
 * span's log records mostly come soon around it.
 */
const SPAN_NAMES = 100_000;
class SpanNames {
  private readonly names = new Map<string, string>();
  add(traceId: string, spanId: string, name: string): void {
    const key = `${traceId}/${spanId}`;
    this.names.delete(key);
    this.names.set(key, name);
    if (this.names.size > SPAN_NAMES) this.names.delete(this.names.keys().next().value!);
  }
  get(traceId: string, spanId: string): string | undefined {
    return this.names.get(`${traceId}/${spanId}`);
  }
}

/** Records of a refused request tried alone before the database is taken to be failing as a whole. */
const ALONE_PROBES = 8;

/** DuckDB's error refuses a record's values (a constraint, a cast), not the database's writing of them (a full disk, an I/O error). */
const refusesRecord = (e: Error): boolean => /^(Constraint|Conversion|Invalid Input|Out of Range) Error/.test(e.message);

function rowsIn(batches: LiveRows[]): number {
  return batches.reduce((n, b) => n + b.length, 0);
}

function spanStartOf(r: SpanEndRecord): SpanStartRecord {
  return {
    record_type: 'SpanStart',
    trace_id: r.trace_id,
    span_id: r.span_id,
    span_name: r.span_name,
    parent_span_id: r.parent_span_id,
    links: null,
    start_time_unix_nano: r.start_time_unix_nano,
    severity_number: r.severity_number,
    severity_text: r.severity_text,
    event_type: r.event_type,
    attributes: r.attributes,
  };
}
