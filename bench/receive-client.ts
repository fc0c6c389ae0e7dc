/**
 * Bench client: a JSONL file's records as OTLP/HTTP protobuf requests of 512 spans (or logs), encoded
 * by the OpenTelemetry JS serializers our OTLP sink's exporters use. Requests are encoded before the
 * clock starts (encoding costs ~70 µs a span in the SDK, more than the receiver may spend), then sent
 * over keep-alive connections with a few in flight, as the SDK's batch processors do. Prints one JSON
 * line: counts, send wall time and this process's CPU time while sending.
 */
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Pool } from 'undici';
import { readRecords } from '../src/produce/convert.js';
import { toLogRecord, toReadableSpan } from '../src/produce/sinks/otlp.js';

const [file, url, inFlightArg] = process.argv.slice(2) as [string, string, string?];
const BATCH = 512;
const inFlight = Number(inFlightArg ?? 4);

const resource = resourceFromAttributes({ 'service.name': 'dbt-fusion' });
const scope = { name: 'dbt-fusion' };
const requests: { path: string; body: Uint8Array }[] = [];
let spans: ReadableSpan[] = [];
let logs: ReadableLogRecord[] = [];
let nSpans = 0;
let nLogs = 0;
const cpu0 = process.cpuUsage();
for await (const r of readRecords(file)) {
  if (r.record_type === 'SpanEnd') {
    spans.push(toReadableSpan(r, resource, scope));
    nSpans++;
    if (spans.length === BATCH) {
      requests.push({ path: '/v1/traces', body: ProtobufTraceSerializer.serializeRequest(spans)! });
      spans = [];
    }
  } else if (r.record_type === 'LogRecord') {
    logs.push(toLogRecord(r, resource, scope));
    nLogs++;
    if (logs.length === BATCH) {
      requests.push({ path: '/v1/logs', body: ProtobufLogsSerializer.serializeRequest(logs)! });
      logs = [];
    }
  }
}
if (spans.length) requests.push({ path: '/v1/traces', body: ProtobufTraceSerializer.serializeRequest(spans)! });
if (logs.length) requests.push({ path: '/v1/logs', body: ProtobufLogsSerializer.serializeRequest(logs)! });
const encodeCpu = process.cpuUsage(cpu0);

const pool = new Pool(url, { connections: inFlight, pipelining: 1 });
const cpu1 = process.cpuUsage();
const t0 = performance.now();
let next = 0;
let retried = 0;
async function worker(): Promise<void> {
  while (next < requests.length) {
    const req = requests[next++]!;
    for (;;) {
      const res = await pool.request({ method: 'POST', path: req.path, headers: { 'content-type': 'application/x-protobuf' }, body: req.body });
      await res.body.arrayBuffer();
      if (res.statusCode === 200) break;
      if (res.statusCode !== 429 && res.statusCode !== 503) throw new Error(`${req.path}: HTTP ${res.statusCode}`);
      retried++;
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers['retry-after'] ?? 1)));
    }
  }
}
await Promise.all(Array.from({ length: inFlight }, worker));
const sendMs = performance.now() - t0;
const sendCpu = process.cpuUsage(cpu1);
await pool.close();
const ms = (c: NodeJS.CpuUsage) => Math.round((c.user + c.system) / 1000);
process.stdout.write(
  JSON.stringify({ spans: nSpans, logs: nLogs, requests: requests.length, retried, sendMs: Math.round(sendMs), sendCpuMs: ms(sendCpu), encodeCpuMs: ms(encodeCpu) }) + '\n',
);
