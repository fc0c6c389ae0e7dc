/**
 * `explore --follow`: tail a JSONL file that the engine is still writing. Only complete lines are
 * loaded (a half-written last line waits for its newline); each batch of appended lines is copied
 * to a chunk file and loaded like any input, so the derived relations of the touched traces are
 * rebuilt and unended spans show as running. A file replaced or rewritten in place (a logs folder
 * cleaned between two commands) is read again from its start: records already loaded are not added twice.
 * A malformed complete line (an engine killed mid-line, the next run appending to the same file) is
 * skipped and reported with the followed file's line, as a lenient load does: following goes on.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError, UsageError } from '../../errors.js';
import type { Db } from '../../store/db.js';
import { loadPaths, type BadLine, type LoadOptions } from '../../store/load.js';
import { plural } from '../../render/plural.js';

/** What one batch of appended lines gave. */
export interface FollowBatch {
  records: number;
  /** malformed lines skipped in this batch */
  skippedLines: number;
  /** the first of them, its line counted in the followed file */
  firstSkipped?: BadLine;
  /** the file was replaced or truncated before this batch: it was read again from its start */
  restarted?: boolean;
}

export interface FollowOptions {
  intervalMs?: number;
  /** progress of a batch's load, named by the followed file */
  onProgress?: LoadOptions['onProgress'];
  /** after each batch of appended lines is loaded, whether it added records or not */
  onLoaded?: (batch: FollowBatch) => void;
  onError?: (e: unknown) => void;
}

export function assertFollowable(paths: string[]): string {
  if (paths.length !== 1) throw new UsageError('--follow takes exactly one JSONL file');
  const p = paths[0]!;
  let folder = false;
  try {
    folder = statSync(p).isDirectory();
  } catch {
    // (a path that is not there is said by the load, as for any PATH)
  }
  if (folder) throw new InputError('--follow needs a plain JSONL file (a folder)', p);
  if (/\.(gz|parquet)$/i.test(p)) throw new InputError('--follow needs a plain JSONL file (not .gz or Parquet)', p);
  return p;
}

/** The status line's note for a batch. */
export function followNote(file: string, b: FollowBatch, added = `following: +${plural(b.records, 'record')}`): string {
  if (b.restarted) added = `following: ${file} was replaced or truncated: read again from its start, +${plural(b.records, 'record')} new`;
  if (!b.skippedLines) return added;
  const first = b.firstSkipped ? ` (${InputError.format(b.firstSkipped.reason, file, b.firstSkipped.line, b.firstSkipped.field)})` : '';
  return `${added}; skipped ${plural(b.skippedLines, 'malformed line')}${first}`;
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

/** Counts the newlines of the bytes passing through. */
class LineCounter extends Transform {
  lines = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null, data?: Buffer) => void): void {
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) this.lines++;
    done(null, chunk);
  }
}

export class Follower {
  private offset = 0;
  /** lines before the offset: a batch's line N is the file's line lineBase + N */
  private lineBase = 0;
  /** malformed lines skipped since following began, and the first of them */
  skippedLines = 0;
  firstSkipped: BadLine | undefined;
  /** how many times the file was found replaced or truncated, and read again from its start */
  restarts = 0;
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
    const n = (await this.step())?.records ?? 0;
    if (!this.stopped) this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 500);
    return n;
  }

  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    try {
      // every batch loaded is reported, one that added nothing too: it ends the load in the status line
      const batch = await this.step();
      if (batch) this.opts.onLoaded?.(batch);
    } catch (e) {
      this.opts.onError?.(e);
    }
  }

  /** Load appended whole lines; returns the number of records added. */
  async poll(): Promise<number> {
    return (await this.step())?.records ?? 0;
  }

  /** Load appended whole lines as one batch; undefined when there were none. */
  private async step(): Promise<FollowBatch | undefined> {
    if (this.busy) return undefined;
    this.busy = true;
    let restarted = false;
    try {
      const { size, ino } = await stat(this.file);
      if (this.offset > 0 && (ino !== this.ino || size < this.offset || !(await this.markHolds()))) {
        this.offset = 0;
        this.lineBase = 0;
        this.mark = Buffer.alloc(0);
        this.restarts++;
        restarted = true;
      }
      this.ino = ino;
      const nothing = restarted ? { records: 0, skippedLines: 0, restarted } : undefined;
      if (size <= this.offset) return nothing;
      const end = await lastLineEnd(this.file, this.offset, size);
      if (end <= this.offset) return nothing;
      const part = path.join(this.dir!, `${path.basename(this.file, '.jsonl')}.part${String(++this.chunk).padStart(5, '0')}.jsonl`);
      const counter = new LineCounter();
      await pipeline(createReadStream(this.file, { start: this.offset, end: end - 1 }), counter, createWriteStream(part));
      const onProgress = this.opts.onProgress;
      try {
        const report = await loadPaths(this.db, [part], {
          lenient: true,
          onProgress: onProgress && ((p) => onProgress({ ...p, file: this.file })),
        }).catch((e: unknown) => {
          throw this.inFollowedFile(e, part);
        });
        const bad = report.files[0]?.badLines[0];
        const batch: FollowBatch = {
          records: report.records,
          skippedLines: report.skippedLines,
          firstSkipped: bad && { ...bad, line: this.lineBase + bad.line },
          ...(restarted ? { restarted } : {}),
        };
        this.skippedLines += report.skippedLines;
        this.firstSkipped ??= batch.firstSkipped;
        this.offset = end;
        this.lineBase += counter.lines;
        this.mark = await readAt(this.file, Math.max(0, end - MARK_BYTES), Math.min(end, MARK_BYTES));
        return batch;
      } finally {
        await rm(part, { force: true });
      }
    } finally {
      this.busy = false;
    }
  }

  /** An error about a batch's chunk file names the followed file and the line there. */
  private inFollowedFile(e: unknown, part: string): unknown {
    if (!(e instanceof InputError) || e.file !== part) return e;
    const reason = e.message.slice(InputError.format('', e.file, e.line, e.field).length);
    return new InputError(reason, this.file, e.line === undefined ? undefined : this.lineBase + e.line, e.field);
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
