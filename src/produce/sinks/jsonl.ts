/**
 * JSONL sink: one line per record as events occur, the engine's bytes. File mode follows
 * `--otel-file-name` (under the log path, appended); stream mode follows `--log-format otel` (stdout).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { openWriteStream } from '../output-claim.js';
import { serializeRecord, type JsonlRecord } from '../record.js';
import { levelSeverity, type Level, type TelemetrySink } from './types.js';
import { makeFolders } from '../../folders.js';

export interface JsonlSinkOptions {
  /** file path; a bare name is placed under `logPath` like the engine's `--otel-file-name` */
  path?: string;
  /** folder for bare file names (engine default `logs`) */
  logPath?: string;
  /** write here instead of a file (e.g. process.stdout for `--log-format otel`) */
  stream?: Writable;
  /** append to an existing file (engine behaviour, default true); false truncates */
  append?: boolean;
  /** default debug for files, info for streams (the engine's --log-level-file / --log-level defaults) */
  level?: Level;
}

/** Lines are handed to the stream in chunks of about this size, or after FLUSH_MS at the latest. */
const FLUSH_AT = 1 << 16;
const FLUSH_MS = 200;
/** A reused byte chunk holds any flush whose text is at most a third of it (UTF-8: <= 3 bytes per unit). */
const CHUNK_BYTES = 4 * FLUSH_AT;
/**
 * Chunks kept for reuse, so a burst that queued more does not hold its memory afterwards. A migrate
 * writes faster than the disk takes it and has many chunks in flight: keeping too few means page
 * faults on fresh ones.
 */
const KEEP_CHUNKS = 256;

export class JsonlSink implements TelemetrySink {
  readonly name: string;
  readonly minSeverity: number;
  error?: Error;
  private out: Writable;
  private file?: Writable;
  private buf = '';
  /**
   * Byte chunks the stream has finished with, reused: a fresh buffer per flush costs its allocation
   * and the page faults of new memory.
   */
  private readonly chunks: Buffer[] = [];
  private waiting: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly ownsStream: boolean;
  /** settles when the file is written and closed (a file of its own) */
  private finished?: Promise<void>;

  constructor(opts: JsonlSinkOptions) {
    if (opts.stream) {
      this.out = opts.stream;
      this.ownsStream = false;
      this.name = 'jsonl stream';
      this.minSeverity = levelSeverity(opts.level, 'info');
    } else {
      if (!opts.path) throw new Error('JsonlSink needs a path or a stream');
      const path = jsonlSinkPath(opts.path, opts.logPath);
      makeFolders(dirname(path));
      const file = openWriteStream(path, opts.append === false ? 'w' : 'a');
      this.file = file;
      const gzip = path.endsWith('.gz') ? createGzip() : undefined;
      this.out = gzip ?? file;
      // One pipeline: a file that fails (a full disk) fails the gzip stream too, which then neither
      // drains nor takes more, so a writer waiting on it hears of the error instead of waiting for ever.
      this.finished = new Promise<void>((res, rej) => {
        if (gzip) pipeline(gzip, file).then(res, rej);
        else {
          file.once('error', rej);
          file.once('close', () => (file.errored ? rej(file.errored) : res()));
        }
      });
      this.finished.catch(() => undefined);
      this.ownsStream = true;
      this.name = `jsonl ${path}`;
      this.minSeverity = levelSeverity(opts.level, 'debug');
    }
    const onError = (e: Error) => (this.error ??= e);
    this.out.on('error', onError);
    this.file?.on('error', onError);
  }

  write(r: JsonlRecord): void {
    this.writeLine(serializeRecord(r));
  }

  writeJson(r: JsonlRecord, attributesJson: string): void {
    this.writeLine(serializeRecord(r, attributesJson));
  }

  private writeLine(line: string): void {
    if (this.error) throw this.error;
    this.buf += line + '\n';
    if (this.buf.length >= FLUSH_AT) this.flush();
    // A quiet run still shows its events within FLUSH_MS (and a crash loses at most that much).
    else if (!this.timer) this.timer = setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.buf) return;
    const text = this.buf;
    this.buf = '';
    if (text.length * 3 > CHUNK_BYTES) return this.send(text);
    const chunk = this.chunks.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
    const n = chunk.write(text, 0, 'utf8');
    this.send(chunk.subarray(0, n), () => this.chunks.length < KEEP_CHUNKS && this.chunks.push(chunk));
  }

  /** `written` runs once the stream is done with the bytes (so a chunk can be reused). */
  private send(bytes: string | Buffer, written?: () => void): void {
    const ok = written ? this.out.write(bytes, () => written()) : this.out.write(bytes);
    if (!ok && !this.waiting) {
      // (a stream that failed never drains: its error or its end ends the wait, and the next write throws it)
      this.waiting = new Promise<void>((res) => {
        // whichever comes first ends the wait and takes the other listener away (they would pile up)
        const done = () => {
          this.out.off('drain', done);
          this.out.off('error', done);
          this.out.off('close', done);
          res();
        };
        this.out.once('drain', done);
        this.out.once('error', done);
        this.out.once('close', done);
      }).finally(() => (this.waiting = null));
    }
  }

  /**
   * Append a file of ready JSONL lines (a helper thread's part of a run) after what was written so
   * far, while it is still being written: its bytes are copied as they appear, and the copy ends
   * once `written` has settled and the file has no more. The writer must only append to it.
   */
  async appendFile(path: string, written: Promise<unknown> = Promise.resolve()): Promise<void> {
    this.flush();
    let settled = false;
    const ended = written.then(
      () => (settled = true),
      () => (settled = true),
    );
    const pause = () => Promise.race([ended, new Promise((r) => setTimeout(r, 10))]);
    let fh: FileHandle | undefined;
    // the writer may not have created it yet
    while (!fh) {
      const wasSettled = settled;
      try {
        fh = await open(path, 'r');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || wasSettled) throw e;
        await pause();
      }
    }
    try {
      // large reads (the copy is on the critical path of a split migrate) into buffers reused once
      // the stream has written them
      const free: Buffer[] = [];
      for (let pos = 0; ; ) {
        const wasSettled = settled;
        const buf = free.pop() ?? Buffer.allocUnsafeSlow(4 << 20);
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (this.error) throw this.error;
        if (bytesRead > 0) {
          pos += bytesRead;
          this.send(buf.subarray(0, bytesRead), () => free.push(buf));
          if (this.waiting) await this.waiting;
        } else {
          free.push(buf);
          if (wasSettled) return;
          await pause();
        }
      }
    } finally {
      await fh.close();
    }
  }

  async drain(): Promise<void> {
    this.flush();
    if (this.waiting) await this.waiting;
  }

  async close(): Promise<void> {
    this.flush();
    if (!this.ownsStream) {
      if (this.waiting) await this.waiting;
      if (this.error) throw this.error;
      return;
    }
    if (this.error) throw this.error;
    if (!this.out.destroyed) this.out.end();
    await this.finished;
    if (this.error) throw this.error;
  }
}

/** Where a JSONL sink writes `p`: a bare name under `logPath` (default logs/), like the engine's --otel-file-name. */
export function jsonlSinkPath(p: string, logPath = 'logs'): string {
  return isAbsolute(p) || p.includes('/') || p.includes('\\') ? p : join(logPath, p);
}

export function jsonlSink(opts: JsonlSinkOptions): JsonlSink {
  return new JsonlSink(opts);
}
