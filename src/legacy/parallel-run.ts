/**
 * One big run_results.json written by several threads. The main thread writes the run's head
 * (process, invocation, phase starts), the first part of the nodes and the ends; each helper
 * thread (run-worker.ts) parses the file itself, writes a later part of the nodes (under the head's
 * span ids, derived as the main thread derives them) to a file beside the output, and the main
 * thread appends those files in order. The output is the sequential one byte for byte: span ids
 * and the nodes' event ids are derived from what they stand for (span-ids.ts).
 * Only for JSONL output (a Parquet file or an OTLP stream has one writer) and compiled code (the
 * worker runs dist/…/run-worker.js; from TypeScript sources, as under vitest, runs stay sequential).
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { besideFile, removeOnStop } from '../produce/output-claim.js';
import { JsonlSink } from '../produce/sinks/jsonl.js';
import type { CountingSink } from '../produce/sinks/counting.js';
import { timed } from '../store/timing.js';
import type { PartCounts, RunSplit } from './from-run-results.js';

/** Files smaller than this are written by one thread: starting a thread and parsing again costs more. */
export const PARALLEL_MIN_BYTES = 8 << 20;
const MAX_JOBS = 4;
/**
 * The most threads `--jobs` may ask for: each helper parses the whole file again (about 90 MB more
 * for a 34 MB file), and past a few the main thread's appending of the parts is what takes the time.
 */
export const JOBS_LIMIT = 16;
const WORKER = new URL('./run-worker.js', import.meta.url);

/** What a helper thread is given. */
export interface PartJob {
  file: string;
  manifest?: string;
  /** this helper's part (1..parts-1; part 0 is the main thread's) */
  part: number;
  parts: number;
  tmp: string;
}

/** What a helper thread answers. */
export interface PartDone {
  counts: PartCounts;
  records: number;
}

/** Nodes [from, to) of part k of n nodes in `parts` parts. */
export function partRange(n: number, k: number, parts: number): [number, number] {
  return [Math.floor((n * k) / parts), Math.floor((n * (k + 1)) / parts)];
}

/** Threads for a file: `jobs` when given, else every core (up to 4) for big files; 1 without a compiled worker. */
export function jobsFor(file: string, jobs?: number): number {
  if (!existsSync(fileURLToPath(WORKER))) return 1;
  const j = jobs ?? (statSync(file).size >= PARALLEL_MIN_BYTES ? Math.min(availableParallelism(), MAX_JOBS) : 1);
  return Math.max(1, Math.floor(j));
}

interface Helper {
  worker: Worker;
  tmp: string;
  /** no longer removed by a signal that stops the process */
  untrack: () => void;
  done: Promise<PartDone>;
}

/**
 * Helper threads for one file, started before the main thread parses it (they parse in parallel).
 * `split(n)` gives migrateRun its share; `abort()` stops them and removes their files.
 */
export class RunHelpers {
  private readonly helpers: Helper[] = [];

  constructor(
    readonly file: string,
    readonly parts: number,
    o: { out: string; manifest?: string },
  ) {
    for (let part = 1; part < parts; part++) {
      const tmp = besideFile(`${o.out}.part${part}`);
      const job: PartJob = { file, manifest: o.manifest, part, parts, tmp };
      // A larger young generation: the writer makes short-lived strings by the million, and fewer survive to be copied.
      const worker = new Worker(WORKER, { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: 96 } });
      const done = new Promise<PartDone>((resolve, reject) => {
        worker.once('message', (m: PartDone) => resolve(m));
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`helper thread for part ${part} of ${file} exited (code ${code}) before finishing`)));
      });
      done.catch(() => undefined); // awaited in finish(); an early failure must not be unhandled
      this.helpers.push({ worker, tmp, done, untrack: removeOnStop(tmp) });
    }
  }

  /** migrateRun's share of a run of n nodes; the helpers' lines are appended to `out`'s JSONL sink. */
  split(n: number, out: CountingSink): RunSplit {
    if (!(out.inner instanceof JsonlSink)) throw new Error('a run is split between threads only for JSONL output');
    const sink = out.inner;
    return { own: partRange(n, 0, this.parts)[1], finish: () => this.finish(sink, out) };
  }

  private async finish(sink: JsonlSink, counter: CountingSink): Promise<PartCounts[]> {
    const counts: PartCounts[] = [];
    try {
      for (const [i, h] of this.helpers.entries()) {
        // Copied while the helper still writes it, then its counts (RUNLENS_TIMING=1 shows both).
        // A helper that failed reports its own error, not the copy's.
        await timed(`migrate: copy part ${i + 1}`, () => sink.appendFile(h.tmp, h.done).catch(async (e: unknown) => {
          await h.done;
          throw e;
        }));
        const r = await timed(`migrate: wait for part ${i + 1}`, () => h.done);
        counter.records += r.records;
        counts.push(r.counts);
      }
    } finally {
      await this.abort();
    }
    return counts;
  }

  async abort(): Promise<void> {
    await Promise.all(this.helpers.map((h) => h.worker.terminate()));
    for (const h of this.helpers) {
      rmSync(h.tmp, { force: true });
      h.untrack();
    }
  }
}
