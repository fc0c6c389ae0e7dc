/** A helper thread of parallel-run.ts: one part of a run's nodes into a file of JSONL lines. */
import { parentPort, workerData } from 'node:worker_threads';
import { eventKey } from '../telemetry/event-types.js';
import { JsonlSink } from '../produce/sinks/jsonl.js';
import { ForwardingSink } from '../produce/sinks/forwarding.js';
import type { JsonlRecord } from '../produce/record.js';
import { TelemetryWriter } from '../produce/writer.js';
import { HEAD_EVENT_KEYS, migrateRunPart, planPart } from './from-run-results.js';
import { readManifest } from './manifest.js';
import { partRange, type PartDone, type PartJob } from './parallel-run.js';
import { readRunResults } from './run-results.js';
import { idsFor, RunIds } from './span-ids.js';

/** Drops the head's records (the main thread writes those) and counts the rest. */
class PartSink extends ForwardingSink<JsonlSink> {
  private readonly head = new Map<string, boolean>();
  records = 0;
  private isHead(eventType: string): boolean {
    let h = this.head.get(eventType);
    if (h === undefined) this.head.set(eventType, (h = HEAD_EVENT_KEYS.has(eventKey(eventType) ?? '')));
    return h;
  }
  write(r: JsonlRecord): void {
    if (this.isHead(r.event_type)) return;
    this.inner.write(r);
    this.records++;
  }
  writeJson(r: JsonlRecord, attributesJson: string): void {
    if (this.isHead(r.event_type)) return;
    this.inner.writeJson(r, attributesJson);
    this.records++;
  }
}

const job = workerData as PartJob;
const run = readRunResults(job.file);
const manifest = job.manifest ? readManifest(job.manifest) : undefined;
const [from, to] = partRange(run.results.length, job.part, job.parts);
const planned = planPart(run, manifest);
const sink = new PartSink(new JsonlSink({ path: job.tmp, append: false, level: 'debug' }));
// (the part's records draw no id of the run's own sequence: its spans and its nodes' event ids are keyed)
const ids = new RunIds(idsFor(planned.summary.invocationId));
// A failing sink is reported by throwing: the main thread turns it into the migrate's error.
const w = new TelemetryWriter({ sinks: [sink], ids, package: 'dbt', version: run.dbtVersion ?? 'unknown', onSinkError: () => undefined });
const counts = await migrateRunPart(w, planned, from, to);
await sink.close();
const failed = sink.error ?? [...w.sinkErrors.values()][0];
if (failed) throw failed;
const done: PartDone = { counts, records: sink.records };
parentPort!.postMessage(done);
