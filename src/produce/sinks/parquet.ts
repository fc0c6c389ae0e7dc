/**
 * Parquet sink (`--otel-parquet-file-name`): records stream into the Arrow/Parquet writer as they
 * arrive, and the file appears when the run completes (the footer is written at close, as in the
 * engine, which truncates the file per run). Default level info; `level: 'trace'` keeps everything
 * like `--log-level-file trace`.
 */
import { isAbsolute, join } from 'node:path';
import { writeParquetFile, type ParquetWriteOptions } from '../parquet-writer.js';
import type { JsonlRecord } from '../record.js';
import { levelSeverity, type Level, type TelemetrySink } from './types.js';

export interface ParquetSinkOptions extends ParquetWriteOptions {
  /** file path; a bare name goes under `<targetPath>/metadata/` like the engine */
  path: string;
  targetPath?: string;
  level?: Level;
}

/** Unbounded single-consumer queue with a high-water mark the producer can wait on. */
class RecordQueue implements AsyncIterable<JsonlRecord> {
  private items: JsonlRecord[] = [];
  private head = 0;
  private ended = false;
  private wakeConsumer: (() => void) | null = null;
  private wakeProducers: (() => void)[] = [];
  constructor(private readonly highWater: number) {}

  get size(): number {
    return this.items.length - this.head;
  }
  push(r: JsonlRecord): void {
    this.items.push(r);
    this.wakeConsumer?.();
  }
  end(): void {
    this.ended = true;
    this.wakeConsumer?.();
  }
  /** resolves once the consumer has brought the queue under the high-water mark */
  belowHighWater(): Promise<void> {
    if (this.size < this.highWater) return Promise.resolve();
    return new Promise((res) => this.wakeProducers.push(res));
  }
  async *[Symbol.asyncIterator](): AsyncIterator<JsonlRecord> {
    for (;;) {
      if (this.head < this.items.length) {
        const r = this.items[this.head]!;
        this.items[this.head++] = undefined as never;
        if (this.head > 65_536 && this.head * 2 > this.items.length) {
          this.items = this.items.slice(this.head);
          this.head = 0;
        }
        if (this.size < this.highWater / 2 && this.wakeProducers.length) for (const w of this.wakeProducers.splice(0)) w();
        yield r;
        continue;
      }
      for (const w of this.wakeProducers.splice(0)) w();
      if (this.ended) return;
      await new Promise<void>((res) => (this.wakeConsumer = res));
      this.wakeConsumer = null;
    }
  }
}

export class ParquetSink implements TelemetrySink {
  readonly name: string;
  readonly minSeverity: number;
  readonly path: string;
  error?: Error;
  private queue = new RecordQueue(200_000);
  private done: Promise<{ records: number }>;

  constructor(opts: ParquetSinkOptions) {
    this.path = parquetSinkPath(opts.path, opts.targetPath);
    this.name = `parquet ${this.path}`;
    this.minSeverity = levelSeverity(opts.level, 'info');
    this.done = writeParquetFile(this.queue, this.path, opts);
    this.done.catch((e: Error) => {
      this.error ??= e;
    });
  }

  write(r: JsonlRecord): void {
    if (this.error) throw this.error;
    this.queue.push(r);
  }

  drain(): Promise<void> {
    return this.error ? Promise.resolve() : Promise.race([this.queue.belowHighWater(), this.done.then(() => undefined, () => undefined)]);
  }

  async close(): Promise<void> {
    this.queue.end();
    await this.done;
  }
}

/** Where a Parquet sink writes `p`: a bare name under `<targetPath>/metadata/` (default target/), like the engine. */
export function parquetSinkPath(p: string, targetPath = 'target'): string {
  return isAbsolute(p) || p.includes('/') ? p : join(targetPath, 'metadata', p);
}

export function parquetSink(opts: ParquetSinkOptions): ParquetSink {
  return new ParquetSink(opts);
}
