/** Bench client: streams a JSONL file's records to an OTLP endpoint through our OTLP sink (batches of 512). */
import { readRecords } from '../src/produce/convert.js';
import { OtlpSink } from '../src/produce/sinks/otlp.js';

const [file, url] = process.argv.slice(2) as [string, string];
const sink = new OtlpSink({ endpoint: url, level: 'trace', flushEvery: 8192 });
let n = 0;
for await (const r of readRecords(file)) {
  sink.write(r);
  if (++n % 8192 === 0) await sink.drain();
}
await sink.close();
process.stdout.write(JSON.stringify({ records: n }) + '\n');
