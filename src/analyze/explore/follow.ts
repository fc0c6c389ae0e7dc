/**
 * `explore --follow`: tail a JSONL file that the engine is still writing. Only complete lines are
 * loaded (a half-written last line waits for its newline); each batch of appended lines is copied
 * to a chunk file and loaded like any input, so the derived relations of the touched traces are
 * rebuilt and unended spans show as running. A file replaced or rewritten in place (a logs folder
 * cleaned between two commands) is read again from its start: records already loaded are not added twice.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../../errors.js';
import type { Db } from '../../store/db.js';
import { loadPaths, type LoadOptions } from '../../store/load.js';

export interface FollowOptions {
  intervalMs?: number;
  lenient?: boolean;
  onProgress?: LoadOptions['onProgress'];
  /** after each batch is loaded (records added) */
  onLoaded?: (records: number) => void;
  /** the file was replaced or truncated: it is read again from its start */
  onReplaced?: () => void;
  onError?: (e: unknown) => void;
}

export function assertFollowable(paths: string[]): string {
  if (paths.length !== 1) throw new UsageError('--follow takes exactly one JSONL file');
  const p = paths[0]!;
  if (/\.(gz|parquet)$/i.test(p)) throw new UsageError('--follow needs a plain JSONL file (not .gz or Parquet)');
  return p;
}

/** Offset just past the last newline in [from, size): only whole lines are read. */
async function lastLineEnd(file: string, from: number, size: number): Promise<number> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    for (let end = size; end > from; ) {
      const start = Math.max(from, end - buf.length);
      const { bytesRead } = await fh.read(buf, 0, end - start, start);
      const i = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (i >= 0) return start + i + 1;
      end = start;
    }
    return from;
  } finally {
    await fh.close();
  }
}

/** Bytes kept from just before the read offset: if they change, the file was rewritten. */
const MARK_BYTES = 256;

async function readAt(file: string, start: number, length: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export class Follower {
  private offset = 0;
  /** the file read so far: its inode and its last bytes before the offset */
  private ino = 0;
  private mark: Buffer = Buffer.alloc(0);
  private chunk = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private dir: string | undefined;
  stopped = false;

  constructor(
    private readonly db: Db,
    readonly file: string,
    private readonly opts: FollowOptions = {},
  ) {}

  /** Load what the file holds now (whole lines), then keep polling for appended lines. */
  async start(): Promise<number> {
    this.dir = await mkdtemp(path.join(tmpdir(), 'runlens-follow-'));
    const n = await this.poll();
    if (!this.stopped) this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 500);
    return n;
  }

  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    try {
      const n = await this.poll();
      if (n > 0) this.opts.onLoaded?.(n);
    } catch (e) {
      this.opts.onError?.(e);
    }
  }

  /** Load appended whole lines; returns the number of records added. */
  async poll(): Promise<number> {
    if (this.busy) return 0;
    this.busy = true;
    try {
      const { size, ino } = await stat(this.file);
      if (this.offset > 0 && (ino !== this.ino || size < this.offset || !(await this.markHolds()))) {
        this.offset = 0;
        this.mark = Buffer.alloc(0);
        this.opts.onReplaced?.();
      }
      this.ino = ino;
      if (size <= this.offset) return 0;
      const end = await lastLineEnd(this.file, this.offset, size);
      if (end <= this.offset) return 0;
      const part = path.join(this.dir!, `${path.basename(this.file, '.jsonl')}.part${String(++this.chunk).padStart(5, '0')}.jsonl`);
      await pipeline(createReadStream(this.file, { start: this.offset, end: end - 1 }), createWriteStream(part));
      try {
        const report = await loadPaths(this.db, [part], { lenient: this.opts.lenient, onProgress: this.opts.onProgress });
        this.offset = end;
        this.mark = await readAt(this.file, Math.max(0, end - MARK_BYTES), Math.min(end, MARK_BYTES));
        return report.records;
      } finally {
        await rm(part, { force: true });
      }
    } finally {
      this.busy = false;
    }
  }

  private async markHolds(): Promise<boolean> {
    const now = await readAt(this.file, this.offset - this.mark.length, this.mark.length);
    return now.equals(this.mark);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
